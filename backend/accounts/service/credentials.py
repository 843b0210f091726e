"""An account's credentials: passwords, browser sessions and API keys, and the rule that they end
together. Disabling an account, changing or resetting its password, a set-up or a school login that takes
it over all end every session and key it had (`end_all`), so re-enabling it or learning the new password
revives nothing an attacker opened with the old one."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from uuid import UUID

from backend.accounts.errors import Conflict, NotAllowed, NotFound, WrongPassword
from backend.accounts.service.people import SELF, existing, new_password_hash
from core.accounts.passwords import verify_password_async
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, api_keys, security_events, sessions
from core.store.accounts.accounts import Account
from core.store.accounts.api_keys import ApiKey
from core.store.accounts.security_events import SecurityEvent
from core.store.accounts.sessions import BrowserSession
from core.store.sql.access import Connection
from core.store.sql.listing import Page
from core.store.sql.pool import Database

WRONG_PASSWORD = Text("password.wrong_current")
GIVE_PASSWORD = Text("password.current_needed")
FRESH_PROOF = Text("password.fresh_proof_needed")
SCHOOL_SIGN_INS = frozenset({"oidc", "lti"})


@dataclass(frozen=True, slots=True)
class Ended:
    sessions: int
    keys: int


async def end_all(
    conn: Connection,
    audit: Audit,
    user_id: UUID,
    *,
    reason: str,
    keep_session: UUID | None = None,
    actor_id: UUID | Literal["self"] | None = SELF,
) -> Ended:
    """Revokes every session (but `keep_session`, the one that changed the password) and every key of
        the account, in the caller's transaction, logged `credentials.revoked` with the reason (its actor: the
    account itself, an administrator, or None for the operator's command line)."""
    ended_sessions = await sessions.revoke_all_sessions(conn, user_id=user_id, keep=keep_session)
    ended_keys = await api_keys.revoke_all_keys(conn, user_id=user_id)
    ended = Ended(ended_sessions, len(ended_keys))
    actor = user_id if isinstance(actor_id, str) else actor_id
    details = {"reason": reason, "sessions": ended.sessions, "keys": ended.keys}
    await audit.event(conn, "credentials.revoked", actor, user_id, details)
    return ended


async def set_disabled(
    db: Database, audit: Audit, *, actor_id: UUID | None, user_id: UUID, disabled: bool
) -> Account:
    """Disables an account (ending all its sessions and keys: re-enabling revives none) or enables it."""
    async with db.connection() as conn, conn.transaction():
        row = existing(await accounts.set_disabled(conn, user_id=user_id, disabled=disabled))
        action = "user.disabled" if disabled else "user.enabled"
        await audit.event(conn, action, actor_id, user_id, {"via": "cli"} if actor_id is None else {})
        if disabled:
            await end_all(conn, audit, user_id, reason="disabled", actor_id=actor_id)
    return row


async def change_password(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    user_id: UUID,
    session_id: UUID | None,
    current_password: str | None,
    new_password: str,
) -> Ended:
    """Sets a new password. An account that has one must give it (WrongPassword when wrong: the route
    spends the sign-in budget); one without a password (it signs in through its school) sets its first
    only from a school sign-in of the last FRESH_SIGN_IN_MINUTES, never from an API key. Every other
    session and every key of the account ends."""
    async with db.connection() as conn:
        account = existing(await accounts.account(conn, user_id=user_id))
        current_hash = await accounts.password_hash_of(conn, user_id=user_id)
        session = (
            await sessions.session_of(conn, user_id=user_id, session_id=session_id) if session_id else None
        )
    if current_hash is not None:
        if current_password is None:
            raise NotAllowed(GIVE_PASSWORD)
        if not await verify_password_async(current_hash, current_password):
            async with db.connection() as conn:
                await audit.own(conn, "signin.failed", user_id, {"via": "password-change"})
            raise WrongPassword(WRONG_PASSWORD)
    elif not _fresh_school_sign_in(session, settings):
        raise NotAllowed(FRESH_PROOF)
    new_hash = await new_password_hash(new_password, settings, email=account.email)
    async with db.connection() as conn, conn.transaction():
        await accounts.set_password(conn, user_id=user_id, password_hash=new_hash)
        ended = await end_all(conn, audit, user_id, reason="password-changed", keep_session=session_id)
        details = {"first": current_hash is None, "sessions_ended": ended.sessions}
        await audit.own(conn, "password.changed", user_id, details)
    return ended


def _fresh_school_sign_in(session: BrowserSession | None, settings: Settings) -> bool:
    if session is None or session.via not in SCHOOL_SIGN_INS:
        return False
    fresh = timedelta(minutes=settings.accounts.fresh_sign_in_minutes)
    return datetime.now(UTC) - session.created_at <= fresh


# The account's own sessions and keys


async def list_sessions(db: Database, settings: Settings, *, user_id: UUID) -> list[BrowserSession]:
    async with db.connection() as conn:
        return await sessions.list_sessions(
            conn, user_id=user_id, idle_minutes=settings.accounts.session_idle_minutes
        )


async def end_session(
    db: Database, audit: Audit, *, user_id: UUID, session_id: UUID, via: str, own: bool
) -> None:
    """Ends one of the account's sessions (sign-out, or one left signed in elsewhere); NotFound for a
    session of someone else, an unknown or an already ended one."""
    async with db.connection() as conn, conn.transaction():
        if await sessions.revoke_session(conn, user_id=user_id, session_id=session_id) is None:
            raise NotFound("Session not found.")
        details: dict[str, object] = {"via": via} if via == "sign-out" else {"via": via, "own": own}
        await audit.own(conn, "session.revoked", user_id, details, target_id=session_id)


async def list_keys(db: Database, *, user_id: UUID) -> list[ApiKey]:
    async with db.connection() as conn:
        return await api_keys.list_keys(conn, user_id=user_id)


async def create_key(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    user_id: UUID,
    name: str,
    expires_at: datetime | None,
) -> tuple[str, ApiKey]:
    """A new key (returned once) and its record; Conflict past API_KEYS_MAX_PER_USER live keys."""
    most = settings.limits.api_keys_max_per_user
    async with db.connection() as conn, conn.transaction():
        # Serialises a user's key creations, so concurrent requests cannot pass the cap together.
        await conn.execute("SELECT 1 FROM users WHERE id = %s FOR NO KEY UPDATE", (user_id,))
        if await api_keys.count_live_keys(conn, user_id=user_id) >= most:
            raise Conflict(f"You already have {most} live keys; revoke one first.")
        key, row = await api_keys.create_api_key_row(conn, user_id=user_id, name=name, expires_at=expires_at)
        expires = expires_at.isoformat() if expires_at else None
        await _log_key(conn, audit, user_id, "key.created", row, expires_at=expires)
    return key, row


async def revoke_key(db: Database, audit: Audit, *, user_id: UUID, key_id: UUID, in_use: UUID | None) -> None:
    """Revokes one of the account's keys (the one in use too); revoking a revoked key does nothing."""
    async with db.connection() as conn, conn.transaction():
        row = await api_keys.revoke_key(conn, user_id=user_id, key_id=key_id)
        if row is None:
            if await api_keys.has_key(conn, user_id=user_id, key_id=key_id):
                return
            raise NotFound("Key not found.")
        await _log_key(conn, audit, user_id, "key.revoked", row, own_key=row.id == in_use)


async def _log_key(
    conn: Connection, audit: Audit, user_id: UUID, action: str, key: ApiKey, **details: object
) -> None:
    """The account's own key event: the key's name and prefix (never the key), and the details."""
    shown = {"name": key.name, "prefix": key.prefix, **details}
    await audit.event(conn, action, user_id, user_id, shown, about=key.id)


async def own_events(db: Database, *, user_id: UUID, page: Page) -> list[SecurityEvent]:
    """The account's own events (its keys, sessions and password, by it or by an administrator)."""
    async with db.connection() as conn:
        return await security_events.user_events(conn, user_id=user_id, page=page)

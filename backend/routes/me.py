"""The caller's own account: profile, password, browser sessions, API keys and account events."""

from dataclasses import asdict
from typing import Any
from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, Response, status
from psycopg import AsyncConnection

from backend.deps import CurrentUser, DbDep, LimiterDep, SettingsDep, UserDep
from backend.middleware.rate_limits import RateLimited, note
from backend.schemas.account import KeyCreate, KeyCreated, KeyOut, SecurityEventOut
from backend.schemas.accounts import MeOut, PasswordChange, ProfileChange, SessionRow
from backend.services import security_log
from backend.services.browser_sessions import clear_session_cookie
from backend.services.paging import EventPageDep
from backend.services.sign_in import refuse_weak_password
from core.accounts.passwords import hash_password_async, verify_password_async
from core.store import accounts, security_events, sessions, users
from core.store.users import ApiKey

router = APIRouter(prefix="/me", tags=["account"])
WRONG_PASSWORD = "Wrong current password."


def _account_gone() -> HTTPException:
    # The caller was found a moment ago: only a deletion in between gets here.
    return HTTPException(status.HTTP_404_NOT_FOUND, "Account not found.")


@router.get("")
async def me(db: DbDep, user: UserDep) -> MeOut:
    """The caller's account; `has_password` says whether it can sign in with one (never the hash)."""
    async with db.connection() as conn:
        found = await accounts.account(conn, user_id=user.id)
    if found is None:
        raise _account_gone()
    return MeOut.model_validate(found)


@router.patch("")
async def change_profile(body: ProfileChange, db: DbDep, user: UserDep) -> MeOut:
    """Sets the caller's display name (null clears it)."""
    async with db.connection() as conn:
        changed = await accounts.set_display_name(conn, user_id=user.id, display_name=body.display_name)
    if changed is None:
        raise _account_gone()
    return MeOut.model_validate(changed)


@router.post("/password", status_code=status.HTTP_204_NO_CONTENT)
async def change_password(
    body: PasswordChange,
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    user: UserDep,
    limiter: LimiterDep,
) -> Response:
    """Sets a new password. An account that has one must give it (403 when wrong, and it spends the
    account's sign-in failure budget: a stolen session cannot guess the password here either); one
    signed in only through its school sets its first. Every other session of the account ends."""
    async with db.connection() as conn:
        current_hash = await accounts.password_hash_of(conn, user_id=user.id)
    if current_hash is not None:
        if limiter is not None and (blocked := await limiter.login_blocked(user.email)):
            note(request.scope, blocked)
            raise RateLimited(blocked, "Too many wrong passwords; wait before trying again.")
        if body.current_password is None:
            raise HTTPException(status.HTTP_403_FORBIDDEN, "Give your current password to change it.")
        if not await verify_password_async(current_hash, body.current_password):
            if limiter is not None:
                await limiter.login_failed(user.email)
            async with db.connection() as conn:
                await security_log.record_own(
                    conn, request, "signin.failed", user.id, {"via": "password-change"}
                )
            raise HTTPException(status.HTTP_403_FORBIDDEN, WRONG_PASSWORD)
    refuse_weak_password(body.new_password, settings, user.email)
    new_hash = await hash_password_async(body.new_password)  # no connection held meanwhile
    async with db.connection() as conn, conn.transaction():
        await accounts.set_password(conn, user_id=user.id, password_hash=new_hash)
        ended = await sessions.revoke_all_sessions(conn, user_id=user.id, keep=user.session_id)
        await security_log.record_own(
            conn,
            request,
            "password.changed",
            user.id,
            {"first": current_hash is None, "sessions_ended": ended},
        )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/sessions")
async def list_sessions(db: DbDep, settings: SettingsDep, user: UserDep) -> list[SessionRow]:
    """The caller's live browser sessions, newest first; `current` marks the one of this request."""
    async with db.connection() as conn:
        rows = await sessions.list_sessions(
            conn, user_id=user.id, idle_minutes=settings.accounts.session_idle_minutes
        )
    return [SessionRow.model_validate({**asdict(row), "current": row.id == user.session_id}) for row in rows]


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_session(
    session_id: UUID, request: Request, db: DbDep, settings: SettingsDep, user: UserDep
) -> Response:
    """Ends one of the caller's sessions (a browser left signed in elsewhere): its cookie fails on its
    next request. 404 for a session of someone else, an unknown or an already ended one."""
    async with db.connection() as conn, conn.transaction():
        ended = await sessions.revoke_session(conn, user_id=user.id, session_id=session_id)
        if ended is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Session not found.")
        await security_log.record_own(
            conn,
            request,
            "session.revoked",
            user.id,
            {"via": "account", "own": session_id == user.session_id},
            target_id=session_id,
        )
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    if session_id == user.session_id:  # this browser signed itself out
        clear_session_cookie(response, request, settings)
    return response


@router.get("/keys")
async def list_keys(db: DbDep, user: UserDep) -> list[KeyOut]:
    """Every key of the caller, newest first, revoked and expired ones included."""
    async with db.connection() as conn:
        rows = await users.list_keys(conn, user_id=user.id)
    return [KeyOut.model_validate(row) for row in rows]


@router.post("/keys", status_code=status.HTTP_201_CREATED)
async def create_key(
    body: KeyCreate, request: Request, db: DbDep, user: UserDep, settings: SettingsDep
) -> KeyCreated:
    """A new key, returned once in `key`. At most API_KEYS_MAX_PER_USER live keys per user (409)."""
    expires_at = body.expiry()
    async with db.connection() as conn, conn.transaction():
        # Serialises a user's key creations, so concurrent requests cannot pass the cap together.
        await conn.execute("SELECT 1 FROM users WHERE id = %s FOR NO KEY UPDATE", (user.id,))
        if await users.count_live_keys(conn, user_id=user.id) >= settings.limits.api_keys_max_per_user:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"You already have {settings.limits.api_keys_max_per_user} live keys; revoke one first.",
            )
        key, row = await users.create_api_key_row(
            conn, user_id=user.id, name=body.name, expires_at=expires_at
        )
        expires = expires_at.isoformat() if expires_at else None
        await _log_key(conn, request, user, "key.created", row, expires_at=expires)
    return KeyCreated(**asdict(row), key=key)


@router.delete("/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_key(key_id: UUID, request: Request, db: DbDep, user: UserDep) -> Response:
    """Revokes one of the caller's keys (the one in use too): it fails on the next request, everywhere."""
    async with db.connection() as conn, conn.transaction():
        row = await users.revoke_key(conn, user_id=user.id, key_id=key_id)
        if row is None:
            if await users.has_key(conn, user_id=user.id, key_id=key_id):  # revoked before: nothing to do
                return Response(status_code=status.HTTP_204_NO_CONTENT)
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Key not found.")
        await _log_key(conn, request, user, "key.revoked", row, own_key=row.id == user.key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def _log_key(
    conn: AsyncConnection, request: Request, user: CurrentUser, action: str, key: ApiKey, **details: Any
) -> None:
    """The caller's own key event: the key's name and prefix (never the key), and the action's details."""
    await security_log.record(
        conn,
        request,
        action=action,
        actor_user_id=user.id,
        target_user_id=user.id,
        target_id=key.id,
        details={"name": key.name, "prefix": key.prefix, **details},
    )


@router.get("/audit")
async def my_events(db: DbDep, user: UserDep, page: EventPageDep) -> list[SecurityEventOut]:
    """The caller's account events (keys created and revoked, by them or by the operator), newest first."""
    async with db.connection() as conn:
        rows = await security_events.user_events(conn, user_id=user.id, **page)
    return [SecurityEventOut.model_validate(row) for row in rows]

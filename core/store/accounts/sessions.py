"""Browser sessions (migration 0018): the cookie's sha256 and the CSRF token per sign-in, checked in SQL
on every request like a key: revoked, expired, idle or of a disabled account, it fails at once."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row

from core.accounts.secrets import new_token, token_hash
from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required

# Seconds between two writes of a session's last_seen_at: a read-mostly check stays a read.
LAST_SEEN_RESOLUTION_S = 60
_LIVE = (
    "s.revoked_at IS NULL AND s.expires_at > now()"
    " AND s.last_seen_at > now() - make_interval(mins => %(idle_minutes)s)"
)


@dataclass(frozen=True, slots=True)
class SessionHolder:
    """The account a live session belongs to."""

    id: UUID
    email: str
    is_admin: bool
    session_id: UUID
    csrf_token: str


@dataclass(frozen=True, slots=True)
class BrowserSession:
    """A stored session, as its owner lists it: never the cookie or its hash."""

    id: UUID
    user_id: UUID
    via: str
    user_agent: str | None
    address: str | None
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


_COLUMNS = columns(BrowserSession)


@dataclass(frozen=True, slots=True)
class NewSession:
    token: str  # the cookie's value: exists only here
    csrf_token: str
    session: BrowserSession


async def create_session(
    conn: Connection,
    *,
    user_id: UUID,
    via: str,
    max_days: int,
    user_agent: str | None = None,
    address: str | None = None,
) -> NewSession:
    token, csrf = new_token(), new_token(24)
    row = await fetch_required(
        conn,
        class_row(BrowserSession),
        "INSERT INTO browser_sessions (user_id, token_hash, csrf_token, via, user_agent, address, expires_at)"
        " VALUES (%(user_id)s, %(hash)s, %(csrf)s, %(via)s, left(%(agent)s, 400), %(address)s,"
        "  now() + make_interval(days => %(days)s))"
        f" RETURNING {_COLUMNS}",
        {
            "user_id": user_id,
            "hash": token_hash(token),
            "csrf": csrf,
            "via": via,
            "agent": user_agent,
            "address": address,
            "days": max_days,
        },
    )
    return NewSession(token=token, csrf_token=csrf, session=row)


async def holder_of(conn: Connection, token: str, *, idle_minutes: int) -> SessionHolder | None:
    """The account of a live session (not revoked, not expired, not idle too long, account not disabled),
    else None. last_seen_at is bumped in the same statement, at most once per LAST_SEEN_RESOLUTION_S."""
    return await fetch_one(
        conn,
        class_row(SessionHolder),
        f"WITH s AS (SELECT s.id, s.user_id, s.csrf_token, s.last_seen_at FROM browser_sessions s"
        f"  WHERE s.token_hash = %(hash)s AND {_LIVE}),"
        " touched AS (UPDATE browser_sessions b SET last_seen_at = now() FROM s WHERE b.id = s.id"
        "  AND s.last_seen_at < now() - make_interval(secs => %(resolution)s))"
        " SELECT u.id, u.email, u.is_admin, s.id AS session_id, s.csrf_token"
        " FROM s JOIN users u ON u.id = s.user_id WHERE u.disabled_at IS NULL",
        {"hash": token_hash(token), "idle_minutes": idle_minutes, "resolution": LAST_SEEN_RESOLUTION_S},
    )


async def list_sessions(conn: Connection, *, user_id: UUID, idle_minutes: int) -> list[BrowserSession]:
    """The account's live sessions, newest first."""
    return await fetch_all(
        conn,
        class_row(BrowserSession),
        f"SELECT {_COLUMNS} FROM browser_sessions s WHERE s.user_id = %(user_id)s AND {_LIVE}"
        " ORDER BY s.created_at DESC, s.id",
        {"user_id": user_id, "idle_minutes": idle_minutes},
    )


async def revoke_session(conn: Connection, *, user_id: UUID, session_id: UUID) -> BrowserSession | None:
    """Ends one of the account's own sessions; None when it has no such live one."""
    return await fetch_one(
        conn,
        class_row(BrowserSession),
        "UPDATE browser_sessions SET revoked_at = now()"
        " WHERE id = %(id)s AND user_id = %(user_id)s AND revoked_at IS NULL"
        f" RETURNING {_COLUMNS}",
        {"id": session_id, "user_id": user_id},
    )


async def revoke_all_sessions(conn: Connection, *, user_id: UUID, keep: UUID | None = None) -> int:
    """Ends every session of the account but `keep` (a password change keeps the one that made it)."""
    cur = await conn.execute(
        "UPDATE browser_sessions SET revoked_at = now()"
        " WHERE user_id = %(user_id)s AND revoked_at IS NULL AND id IS DISTINCT FROM %(keep)s",
        {"user_id": user_id, "keep": keep},
    )
    return cur.rowcount


async def purge_ended(conn: Connection, *, keep_days: int = 30) -> int:
    """Deletes sessions ended (revoked or expired) more than keep_days ago (the worker's cron)."""
    cur = await conn.execute(
        "DELETE FROM browser_sessions"
        " WHERE coalesce(revoked_at, expires_at) < now() - make_interval(days => %s)",
        (keep_days,),
    )
    return cur.rowcount


async def session_of(conn: Connection, *, user_id: UUID, session_id: UUID) -> BrowserSession | None:
    """One of the account's sessions, live or not."""
    return await fetch_one(
        conn,
        class_row(BrowserSession),
        f"SELECT {_COLUMNS} FROM browser_sessions WHERE id = %(id)s AND user_id = %(user_id)s",
        {"id": session_id, "user_id": user_id},
    )

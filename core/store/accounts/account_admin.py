"""What the first run and reset links need beyond core/store/accounts/accounts.py: the set-up's lock, and the
account a reset link is for."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import class_row

from core.accounts.secrets import token_hash
from core.store.sql.access import Connection
from core.store.sql.rows import fetch_one

# Any constant: two set-ups at once queue on it, so only the first can create the first administrator.
_SETUP_LOCK = 0x5E7_0A0


async def lock_setup(conn: Connection) -> None:
    """Serializes first-run set-ups until the caller's transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))


@dataclass(frozen=True, slots=True)
class ResetTarget:
    user_id: UUID
    email: str
    disabled: bool


async def reset_target(conn: Connection, *, token: str) -> ResetTarget | None:
    """The account a live (unused, unexpired) reset token is for; None otherwise. Spends nothing."""
    return await fetch_one(
        conn,
        class_row(ResetTarget),
        "SELECT u.id AS user_id, u.email, u.disabled_at IS NOT NULL AS disabled"
        " FROM one_time_tokens t JOIN users u ON u.id = t.user_id"
        " WHERE t.kind = 'reset' AND t.token_hash = %(hash)s AND t.used_at IS NULL AND t.expires_at > now()",
        {"hash": token_hash(token)},
    )

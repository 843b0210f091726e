"""What administrators and project owners do to accounts beyond core/store/accounts.py: the first-run
set-up's lock, the account a reset link is for, and whether a project owner may issue one."""

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from psycopg.rows import class_row

from core.accounts.secrets import token_hash
from core.store.access import Connection, owner_of
from core.store.rows import fetch_one

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


OwnerResetRefusal = Literal["not_found", "not_viewer", "admin", "writer"]


@dataclass(frozen=True, slots=True)
class _Standing:
    role: str
    is_admin: bool
    writes_somewhere: bool


async def owner_reset_refusal(
    conn: Connection, *, project_id: UUID, user_id: UUID, member_id: UUID
) -> OwnerResetRefusal | None:
    """Why the owner `user_id` may not issue a reset link for `member_id` (None: they may). Only for a
    viewer of this project who is no administrator and owner or editor of no project: an owner helps a
    student back in, never takes over a colleague's or an administrator's account."""
    standing = await fetch_one(
        conn,
        class_row(_Standing),
        "SELECT m.role, u.is_admin, EXISTS (SELECT 1 FROM project_members w"
        "  WHERE w.user_id = u.id AND w.role IN ('owner', 'editor')) AS writes_somewhere"
        " FROM project_members m JOIN users u ON u.id = m.user_id"
        f" WHERE m.project_id = %(project_id)s AND m.user_id = %(member_id)s AND {owner_of('m.project_id')}",
        {"project_id": project_id, "user_id": user_id, "member_id": member_id},
    )
    if standing is None:
        return "not_found"
    if standing.role != "viewer":
        return "not_viewer"
    if standing.is_admin:
        return "admin"
    if standing.writes_somewhere:
        return "writer"
    return None

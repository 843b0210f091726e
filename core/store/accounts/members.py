"""A project's members: who sees whom, role changes and removals, with the last owner protected.

Every change runs in one transaction that first locks the project row (FOR NO KEY UPDATE: it does not
block inserts that reference the project), so two owners demoting each other at once cannot leave a
project with none. The caller's own role is checked in the same SQL, not only by the route."""

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.accounts.roles import RANK, Role
from core.store.sql.access import Connection, in_project, scope, writer_of
from core.store.sql.listing import Page
from core.store.sql.rows import fetch_all, fetch_one, fetch_required

Outcome = Literal["added", "changed", "unchanged", "removed", "not_found", "last_owner", "forbidden"]
_ROLE_ORDER = "CASE pm.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END"


@dataclass(frozen=True, slots=True)
class MemberChange:
    outcome: Outcome
    old_role: str | None = None


@dataclass(frozen=True, slots=True)
class Member:
    user_id: UUID
    email: str
    role: str
    joined_at: datetime


@dataclass(frozen=True, slots=True)
class _RoleCount:
    role: Role
    n: int


async def list_members(
    conn: Connection, *, project_id: UUID, user_id: UUID, page: Page
) -> tuple[list[Member], dict[Role, int]]:
    """(members, counts per role). Owners and editors see every member with their email; a viewer (a
    student) sees the owners and editors (the teaching staff) and themself, never other viewers, but
    the counts are the whole project's."""
    # The outer alias is `pm`: access.py's subquery calls its own row `m`, which would shadow ours.
    params = scope(project_id, user_id, **page)
    members = await fetch_all(
        conn,
        class_row(Member),
        "SELECT pm.user_id, u.email, pm.role, pm.created_at AS joined_at FROM project_members pm"
        " JOIN users u ON u.id = pm.user_id"
        f" WHERE {in_project('pm')}"
        f"  AND (pm.role IN ('owner', 'editor') OR pm.user_id = %(user_id)s OR {writer_of('pm.project_id')})"
        f" ORDER BY {_ROLE_ORDER}, u.email LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    counted = await fetch_all(
        conn,
        class_row(_RoleCount),
        f"SELECT pm.role, count(*) AS n FROM project_members pm WHERE {in_project('pm')} GROUP BY pm.role",
        params,
    )
    counts: dict[Role, int] = {"owner": 0, "editor": 0, "viewer": 0}
    counts |= {row.role: row.n for row in counted}
    return members, counts


async def _lock_as(conn: Connection, project_id: UUID, actor_id: UUID) -> str | None:
    """Locks the project row; the actor's role in it (None: not a member, or no such project)."""
    role: str | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT m.role FROM projects p JOIN project_members m ON m.project_id = p.id"
        " AND m.user_id = %(actor_id)s WHERE p.id = %(project_id)s FOR NO KEY UPDATE OF p",
        {"project_id": project_id, "actor_id": actor_id},
    )
    return role


async def role_of(conn: Connection, project_id: UUID, member_id: UUID) -> str | None:
    """The member's role in the project; None when not a member."""
    role: str | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT role FROM project_members WHERE project_id = %s AND user_id = %s",
        (project_id, member_id),
    )
    return role


_SQL_RANK = "CASE {0} WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END"


async def grant_at_least(conn: Connection, *, project_id: UUID, user_id: UUID, role: str) -> str | None:
    """Makes user_id a member with at least `role`: added, raised to it, or left as they are when their role
    is as high already (joining by a code, an invitation or an LMS launch never demotes anyone). Returns
    their role before (None: they were not a member). The guard in the upsert keeps a higher role given
    meanwhile (an owner's change between the read and the write)."""
    old = await role_of(conn, project_id, user_id)
    if old is not None and RANK[old] <= RANK[role]:
        return old
    await conn.execute(
        "INSERT INTO project_members AS pm (project_id, user_id, role) VALUES (%(project)s, %(user)s,"
        " %(role)s) ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role"
        f" WHERE {_SQL_RANK.format('EXCLUDED.role')} < {_SQL_RANK.format('pm.role')}",
        {"project": project_id, "user": user_id, "role": role},
    )
    return old


async def _owners(conn: Connection, project_id: UUID) -> int:
    return await fetch_required(
        conn,
        scalar_row,
        "SELECT count(*) AS n FROM project_members WHERE project_id = %s AND role = 'owner'",
        (project_id,),
    )


async def set_role(
    conn: Connection, *, project_id: UUID, actor_id: UUID, member_id: UUID, role: str, add: bool
) -> MemberChange:
    """The owner `actor_id` gives `member_id` this role: adds them when `add` (else a non-member is
    not_found). Demoting the last owner is refused (last_owner)."""
    async with conn.transaction():
        if await _lock_as(conn, project_id, actor_id) != "owner":
            return MemberChange("forbidden")
        old = await role_of(conn, project_id, member_id)
        if old is None and not add:
            return MemberChange("not_found")
        if old == role:
            return MemberChange("unchanged", old)
        if old == "owner" and await _owners(conn, project_id) <= 1:
            return MemberChange("last_owner", old)
        await conn.execute(
            "INSERT INTO project_members (project_id, user_id, role) VALUES (%s, %s, %s)"
            " ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role",
            (project_id, member_id, role),
        )
    return MemberChange("added" if old is None else "changed", old)


async def remove(conn: Connection, *, project_id: UUID, actor_id: UUID, member_id: UUID) -> MemberChange:
    """An owner removes a member, or a member removes themself (leaves). The last owner can do neither
    to themself, nor be removed (last_owner). A non-owner removing someone else is forbidden."""
    async with conn.transaction():
        actor_role = await _lock_as(conn, project_id, actor_id)
        if actor_role is None:
            return MemberChange("not_found")
        if actor_role != "owner" and member_id != actor_id:
            return MemberChange("forbidden")
        old = await role_of(conn, project_id, member_id)
        if old is None:
            return MemberChange("not_found")
        if old == "owner" and await _owners(conn, project_id) <= 1:
            return MemberChange("last_owner", old)
        await conn.execute(
            "DELETE FROM project_members WHERE project_id = %s AND user_id = %s", (project_id, member_id)
        )
    return MemberChange("removed", old)

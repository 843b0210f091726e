"""Project invitations (migration 0018): a code that makes whoever joins with it a member.

Owners create, list and revoke them (the caller's ownership is checked in each statement). Anyone may
preview a live code (not revoked, not expired, not used up); `redeem` spends one use under the
invitation's row lock, so concurrent joins never pass max_uses, and adds the member in the same
transaction. Joining never lowers a role: an owner who opens a viewer link stays an owner, and a member
whose role is already as high spends no use."""

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.accounts.codes import new_code
from core.accounts.roles import RANK
from core.store.accounts import members
from core.store.sql.access import Connection, owner_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one

_LIVE = "i.revoked_at IS NULL AND i.expires_at > now()"
_CODE_ATTEMPTS = 5  # a 50-bit code colliding once is already unlikely; five times means something is wrong


@dataclass(frozen=True, slots=True)
class Invitation:
    id: UUID
    project_id: UUID
    code: str  # stored form: upper-case, no separator (codes.display shows it)
    role: str
    created_at: datetime
    expires_at: datetime
    max_uses: int
    uses: int
    revoked_at: datetime | None


_COLUMNS = columns(Invitation, prefix="i.")


@dataclass(frozen=True, slots=True)
class Preview:
    """What someone about to join sees: no ids, no counts."""

    project_name: str
    role: str
    expires_at: datetime
    used_up: bool  # every use spent: nobody new can join with it
    project_language: str  # pt, en or auto: the join page and its refusals speak it


Outcome = Literal["joined", "promoted", "member", "used_up", "not_found"]


@dataclass(frozen=True, slots=True)
class Redeemed:
    """A join's result. joined: a new member; promoted: an existing member given the invitation's higher
    role; member: already a member with that role or a higher one (no use spent); used_up: every use is
    spent; not_found: no such code, or revoked or expired."""

    outcome: Outcome
    invitation_id: UUID | None = None
    project_id: UUID | None = None
    project_name: str | None = None
    role: str | None = None  # the member's role now
    previous_role: str | None = None


@dataclass(frozen=True, slots=True)
class _Locked:
    id: UUID
    project_id: UUID
    project_name: str
    role: str
    uses: int
    max_uses: int


async def create(
    conn: Connection, *, project_id: UUID, user_id: UUID, role: str, hours: int, max_uses: int
) -> Invitation | None:
    """A new invitation by the owner user_id; None when they are not an owner of the project."""
    for _ in range(_CODE_ATTEMPTS):
        created = await fetch_one(
            conn,
            class_row(Invitation),
            "INSERT INTO invitations AS i (project_id, code, role, created_by, expires_at, max_uses)"
            " SELECT p.id, %(code)s, %(role)s, %(user_id)s, now() + make_interval(hours => %(hours)s),"
            "  %(max_uses)s FROM projects p"
            f" WHERE p.id = %(project_id)s AND {owner_of('p.id')}"
            f" ON CONFLICT (code) DO NOTHING RETURNING {_COLUMNS}",
            scope(project_id, user_id, code=new_code(), role=role, hours=hours, max_uses=max_uses),
        )
        if created is not None:
            return created
        if not await _is_owner(conn, project_id, user_id):
            return None
    raise RuntimeError("could not draw an unused invitation code")


async def _is_owner(conn: Connection, project_id: UUID, user_id: UUID) -> bool:
    found = await fetch_one(
        conn, scalar_row, f"SELECT 1 WHERE {owner_of('%(project_id)s')}", scope(project_id, user_id)
    )
    return found is not None


async def list_for_project(
    conn: Connection, *, project_id: UUID, user_id: UUID, page: Page
) -> list[Invitation]:
    """The project's invitations, newest first, revoked and expired ones included; owners only."""
    return await fetch_all(
        conn,
        class_row(Invitation),
        f"SELECT {_COLUMNS} FROM invitations i"
        f" WHERE i.project_id = %(project_id)s AND {owner_of('i.project_id')}"
        " ORDER BY i.created_at DESC, i.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page),
    )


async def revoke(
    conn: Connection, *, project_id: UUID, user_id: UUID, invitation_id: UUID
) -> Invitation | None:
    """Revokes a live-or-expired invitation of the project; None when there is no unrevoked one or the
    caller is not an owner."""
    return await fetch_one(
        conn,
        class_row(Invitation),
        "UPDATE invitations i SET revoked_at = now()"
        " WHERE i.id = %(id)s AND i.project_id = %(project_id)s AND i.revoked_at IS NULL"
        f" AND {owner_of('i.project_id')} RETURNING {_COLUMNS}",
        scope(project_id, user_id, id=invitation_id),
    )


async def preview(conn: Connection, *, code: str) -> Preview | None:
    """An unrevoked, unexpired invitation's project and role by its stored-form code (None: unknown,
    revoked or expired)."""
    return await fetch_one(
        conn,
        class_row(Preview),
        "SELECT p.name AS project_name, i.role, i.expires_at, i.uses >= i.max_uses AS used_up,"
        " p.language AS project_language"
        f" FROM invitations i JOIN projects p ON p.id = i.project_id WHERE i.code = %(code)s AND {_LIVE}",
        {"code": code},
    )


async def redeem(conn: Connection, *, code: str, user_id: UUID) -> Redeemed:
    """user_id joins with the code (stored form). One transaction: the invitation's row is locked first,
    so concurrent joins are counted one after another, then the caller's membership is read (after the
    lock, so the same person joining twice at once is seen the second time) and the member added."""
    async with conn.transaction():
        found = await fetch_one(
            conn,
            class_row(_Locked),
            "SELECT i.id, i.project_id, p.name AS project_name, i.role, i.uses, i.max_uses"
            " FROM invitations i JOIN projects p ON p.id = i.project_id"
            f" WHERE i.code = %(code)s AND {_LIVE} FOR UPDATE OF i",
            {"code": code},
        )
        if found is None:
            return Redeemed("not_found")
        current = await members.role_of(conn, found.project_id, user_id)
        if current is not None and RANK[current] <= RANK[found.role]:
            return Redeemed("member", found.id, found.project_id, found.project_name, current, current)
        if found.uses >= found.max_uses:
            return Redeemed("used_up", found.id)
        await conn.execute("UPDATE invitations SET uses = uses + 1 WHERE id = %s", (found.id,))
        await members.grant_at_least(conn, project_id=found.project_id, user_id=user_id, role=found.role)
    outcome: Outcome = "joined" if current is None else "promoted"
    return Redeemed(outcome, found.id, found.project_id, found.project_name, found.role, current)

"""Invitations addressed to one person (migration 0020): an owner invites an e-mail address with a role,
and the account with that address accepts or declines once signed in. Nobody becomes a member without
their own answer, and nothing here tells the owner whether the address has an account.

Owners invite, list and withdraw (their ownership is checked in each statement); the invitee's own
statements match the invitation's address against the caller's account, and only an account whose address
is proven (users.email_verified_at) sees or answers one: anyone can sign up under an address with a class
code, and must not be handed what was meant for the address's owner. Accepting never lowers a role the
person already has (the same rule as joining with a code)."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row

from core.store.accounts import members
from core.store.sql.access import Connection, owner_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one

_PENDING = "mi.answered_at IS NULL AND mi.revoked_at IS NULL AND mi.expires_at > now()"


@dataclass(frozen=True, slots=True)
class PersonalInvitation:
    """An invitation addressed to one person: its owners see the address, its invitee who invited them."""

    id: UUID
    project_id: UUID
    project_name: str
    email: str
    role: str
    invited_by: str | None  # the inviting owner's name, else their address
    expires_at: datetime
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Answered:
    """An accepted or declined invitation: the project, and the invitee's role there now (None when
    declined and not a member)."""

    id: UUID
    project_id: UUID
    project_name: str
    role: str | None
    previous_role: str | None


_SHOWN = columns(
    PersonalInvitation,
    prefix="mi.",
    computed={"project_name": "p.name", "invited_by": "coalesce(i.display_name, i.email)"},
)
# The invitation rows `mi` of a statement, with their project and inviter: `FROM mi {_JOINED}`.
_JOINED = "JOIN projects p ON p.id = mi.project_id LEFT JOIN users i ON i.id = mi.invited_by"


async def invite(
    conn: Connection, *, project_id: UUID, user_id: UUID, email: str, role: str, hours: int
) -> PersonalInvitation | None:
    """A pending invitation of `email` by the owner user_id (replacing the role and expiry of one still
    pending for the same address); None when user_id is not an owner of the project."""
    return await fetch_one(
        conn,
        class_row(PersonalInvitation),
        "WITH mi AS (INSERT INTO member_invitations AS mi (project_id, email, role, invited_by, expires_at)"
        "  SELECT p.id, %(email)s, %(role)s, %(user_id)s, now() + make_interval(hours => %(hours)s)"
        f"  FROM projects p WHERE p.id = %(project_id)s AND {owner_of('p.id')}"
        "  ON CONFLICT (project_id, email) WHERE answered_at IS NULL AND revoked_at IS NULL"
        "  DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by,"
        "   expires_at = EXCLUDED.expires_at, created_at = now() RETURNING *)"
        f" SELECT {_SHOWN} FROM mi {_JOINED}",
        scope(project_id, user_id, email=email, role=role, hours=hours),
    )


async def pending_for_project(
    conn: Connection, *, project_id: UUID, user_id: UUID, page: Page
) -> list[PersonalInvitation]:
    """The project's pending personal invitations, newest first (owners only)."""
    owner = owner_of("mi.project_id")
    query = (
        f"SELECT {_SHOWN} FROM member_invitations mi {_JOINED}"
        f" WHERE mi.project_id = %(project_id)s AND {_PENDING} AND {owner}"
        " ORDER BY mi.created_at DESC, mi.id LIMIT %(limit)s OFFSET %(offset)s"
    )
    return await fetch_all(conn, class_row(PersonalInvitation), query, scope(project_id, user_id, **page))


async def withdraw(
    conn: Connection, *, project_id: UUID, user_id: UUID, invitation_id: UUID
) -> PersonalInvitation | None:
    """An owner withdraws a pending invitation; None when there is no such pending one or the caller is
    not an owner."""
    withdrawn = (
        "UPDATE member_invitations mi SET revoked_at = now()"
        f" WHERE mi.id = %(id)s AND mi.project_id = %(project_id)s AND {_PENDING}"
        f" AND {owner_of('mi.project_id')} RETURNING mi.*"
    )
    query = f"WITH mi AS ({withdrawn}) SELECT {_SHOWN} FROM mi {_JOINED}"
    return await fetch_one(
        conn, class_row(PersonalInvitation), query, scope(project_id, user_id, id=invitation_id)
    )


async def received(conn: Connection, *, user_id: UUID) -> list[PersonalInvitation]:
    """The caller's pending invitations (addressed to the caller's proven e-mail), newest first."""
    return await fetch_all(
        conn,
        class_row(PersonalInvitation),
        f"SELECT {_SHOWN} FROM member_invitations mi {_JOINED}"
        " JOIN users u ON u.email = mi.email AND u.email_verified_at IS NOT NULL"
        f" WHERE u.id = %(user_id)s AND {_PENDING} ORDER BY mi.created_at DESC, mi.id LIMIT 200",
        {"user_id": user_id},
    )


async def answer(conn: Connection, *, user_id: UUID, invitation_id: UUID, accept: bool) -> Answered | None:
    """The caller accepts (becoming a member with the invitation's role, never lowering one they have)
    or declines a pending invitation addressed to their account's proven e-mail; None when there is no
    such pending invitation for them. The invitation's row is locked first: answered once."""
    async with conn.transaction():
        found = await fetch_one(
            conn,
            class_row(PersonalInvitation),
            f"SELECT {_SHOWN} FROM member_invitations mi {_JOINED}"
            " JOIN users u ON u.email = mi.email AND u.email_verified_at IS NOT NULL"
            f" WHERE mi.id = %(id)s AND u.id = %(user_id)s AND {_PENDING} FOR UPDATE OF mi",
            {"id": invitation_id, "user_id": user_id},
        )
        if found is None:
            return None
        await conn.execute(
            "UPDATE member_invitations SET answered_at = now(), accepted = %s WHERE id = %s",
            (accept, found.id),
        )
        if accept:
            current = await members.grant_at_least(
                conn, project_id=found.project_id, user_id=user_id, role=found.role
            )
        else:
            current = await members.role_of(conn, found.project_id, user_id)
        now = await members.role_of(conn, found.project_id, user_id)
    return Answered(found.id, found.project_id, found.project_name, now, current)

"""LTI 1.3 (migration 0018): the platforms (LMSs) an administrator registered, their courses mapped to
projects, the nonces of accepted launches, and the one-time tickets that carry a launch out of the LMS's
frame into a first-party window.

A launch is authorised by the platform's signed ID token, not by a member of the project: the
membership writes here have no caller to scope by, and are reached only after that token is checked
(backend/accounts/lti/)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.accounts.roles import RANK
from core.accounts.secrets import token_hash
from core.store.accounts import auth_flows, members
from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_all, fetch_one

TICKET_PREFIX = "ticket:"  # a ticket's auth_flows state; a login's state never starts so
TICKET_MINUTES = 2


@dataclass(frozen=True, slots=True)
class Platform:
    id: UUID
    name: str
    issuer: str
    client_id: str
    auth_login_url: str
    jwks_url: str | None
    jwks: dict[str, Any] | None  # a key set stored at registration, used when there is no jwks_url
    deployment_ids: list[str]
    created_at: datetime


_PLATFORM_COLUMNS = columns(Platform)


async def register_platform(
    conn: Connection,
    *,
    name: str,
    issuer: str,
    client_id: str,
    auth_login_url: str,
    jwks_url: str | None,
    jwks: dict[str, Any] | None,
    deployment_ids: list[str],
) -> Platform | None:
    """A new platform; None when (issuer, client_id) is registered already."""
    return await fetch_one(
        conn,
        class_row(Platform),
        "INSERT INTO lti_platforms (name, issuer, client_id, auth_login_url, jwks_url, jwks, deployment_ids)"
        " VALUES (%(name)s, %(issuer)s, %(client_id)s, %(login)s, %(jwks_url)s, %(jwks)s, %(deployments)s)"
        f" ON CONFLICT (issuer, client_id) DO NOTHING RETURNING {_PLATFORM_COLUMNS}",
        {
            "name": name,
            "issuer": issuer,
            "client_id": client_id,
            "login": auth_login_url,
            "jwks_url": jwks_url,
            "jwks": None if jwks is None else Jsonb(jwks),
            "deployments": deployment_ids,
        },
    )


async def list_platforms(conn: Connection) -> list[Platform]:
    return await fetch_all(
        conn, class_row(Platform), f"SELECT {_PLATFORM_COLUMNS} FROM lti_platforms ORDER BY name, id", {}
    )


async def get_platform(conn: Connection, *, platform_id: UUID) -> Platform | None:
    return await fetch_one(
        conn,
        class_row(Platform),
        f"SELECT {_PLATFORM_COLUMNS} FROM lti_platforms WHERE id = %(id)s",
        {"id": platform_id},
    )


async def find_platform(conn: Connection, *, issuer: str, client_id: str | None) -> Platform | None:
    """The platform of this issuer and client id; without a client id (a login initiation may omit it),
    the issuer's only platform, None when it has several."""
    found = await fetch_all(
        conn,
        class_row(Platform),
        f"SELECT {_PLATFORM_COLUMNS} FROM lti_platforms WHERE issuer = %(issuer)s"
        " AND (%(client_id)s::text IS NULL OR client_id = %(client_id)s) LIMIT 2",
        {"issuer": issuer, "client_id": client_id},
    )
    return found[0] if len(found) == 1 else None


async def delete_platform(conn: Connection, *, platform_id: UUID) -> Platform | None:
    """Removes a platform with its course mappings and nonces (the projects stay); None when unknown."""
    return await fetch_one(
        conn,
        class_row(Platform),
        f"DELETE FROM lti_platforms WHERE id = %(id)s RETURNING {_PLATFORM_COLUMNS}",
        {"id": platform_id},
    )


async def use_nonce(conn: Connection, *, platform_id: UUID, nonce: str, expires_at: datetime) -> bool:
    """Records a launch's nonce until its token expires; False when it was used before (a replay). One
    statement: two launches with the same nonce cannot both record it."""
    await conn.execute("DELETE FROM lti_nonces WHERE expires_at < now()")
    cur = await conn.execute(
        "INSERT INTO lti_nonces (platform_id, nonce, expires_at) VALUES (%s, %s, %s)"
        " ON CONFLICT (platform_id, nonce) DO NOTHING",
        (platform_id, nonce, expires_at),
    )
    return cur.rowcount == 1


async def lock_context(conn: Connection, *, platform_id: UUID, context_id: str) -> None:
    """Serialises launches of one course until the transaction ends, so two instructors opening a new
    course at once create one project, not two."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"lti:{platform_id}:{context_id}",)
    )


async def context_project(conn: Connection, *, platform_id: UUID, context_id: str) -> UUID | None:
    """The project a course opens (None: no instructor has launched it yet)."""
    return await fetch_one(
        conn,
        scalar_row,
        "SELECT project_id FROM lti_contexts WHERE platform_id = %s AND context_id = %s",
        (platform_id, context_id),
    )


async def map_context(
    conn: Connection, *, platform_id: UUID, context_id: str, project_id: UUID, title: str | None
) -> None:
    await conn.execute(
        "INSERT INTO lti_contexts (platform_id, context_id, project_id, title) VALUES (%s, %s, %s, %s)",
        (platform_id, context_id, project_id, title),
    )


Membership = Literal["added", "raised", "unchanged"]


async def join_at_least(conn: Connection, *, project_id: UUID, user_id: UUID, role: str) -> Membership:
    """Makes the launching person a member with at least `role`: added, raised to it, or left as they
    are when their role is already as high (an LMS role never demotes anyone)."""
    old = await members.grant_at_least(conn, project_id=project_id, user_id=user_id, role=role)
    if old is not None and RANK[old] <= RANK[role]:
        return "unchanged"
    return "added" if old is None else "raised"


def _ticket_state(ticket: str) -> str:
    return TICKET_PREFIX + token_hash(ticket)


async def issue_ticket(
    conn: Connection, *, ticket: str, user_id: UUID, platform_id: UUID, next_path: str
) -> None:
    """Stores a launch's one-time ticket (its sha256 only) for TICKET_MINUTES: an auth_flows row of kind
    'lti' whose nonce holds the user id (auth_flows.start's lifetime is a login's, too long for this)."""
    await conn.execute(
        "INSERT INTO auth_flows (state, kind, nonce, platform_id, next_path, expires_at)"
        " VALUES (%s, 'lti', %s, %s, %s, now() + make_interval(mins => %s))",
        (_ticket_state(ticket), str(user_id), platform_id, next_path, TICKET_MINUTES),
    )


@dataclass(frozen=True, slots=True)
class Ticket:
    user_id: UUID
    next_path: str


async def spend_ticket(conn: Connection, *, ticket: str) -> Ticket | None:
    """The ticket's user and destination, spent in the same statement; None when unknown, used or
    expired."""
    flow = await auth_flows.spend(conn, state=_ticket_state(ticket), kind="lti")
    if flow is None or flow.next_path is None:
        return None
    return Ticket(user_id=UUID(flow.nonce), next_path=flow.next_path)


async def ticket_holder(conn: Connection, *, ticket: str) -> UUID | None:
    """Whose live ticket this is, without spending it (the "Continue as …" page shows who)."""
    nonce: str | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT nonce FROM auth_flows WHERE state = %(state)s AND kind = 'lti' AND expires_at > now()",
        {"state": _ticket_state(ticket)},
    )
    return UUID(nonce) if nonce else None

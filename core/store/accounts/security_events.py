"""The security event log (table security_events, migration 0011): key, membership, document and
project-settings actions, with who did them and the request id. Details are small JSON objects of ids
and settings values, never key material, document text or a student's question."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Required, TypedDict, Unpack
from uuid import UUID

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, owner_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_required

ACTIONS = (
    "key.created",
    "key.revoked",
    "member.added",
    "member.role_changed",
    "member.removed",
    "member.left",
    "document.deleted",
    "project.created",
    "project.updated",
    "project.deleted",
    "attempt.reviewed",
    "member.joined",
    "invitation.created",
    "invitation.revoked",
    "user.created",
    "user.disabled",
    "user.enabled",
    "user.admin_granted",
    "password.changed",
    "password.reset_issued",
    "password.reset_used",
    "session.created",
    "session.revoked",
    "signin.failed",
    "identity.linked",
    "lti.platform_registered",
    "lti.platform_removed",
    "lti.launch",
    "invitation.sent",
    "invitation.accepted",
    "invitation.declined",
    "invitation.withdrawn",
    "credentials.revoked",
    "password.removed",
    "password.reset_requested",
    "user.teacher_granted",
    "user.teacher_revoked",
    "mail.sent",
)
_FROM = (
    "FROM security_events e LEFT JOIN users a ON a.id = e.actor_user_id"
    " LEFT JOIN users t ON t.id = e.target_user_id"
)


@dataclass(frozen=True, slots=True)
class SecurityEvent:
    id: int
    project_id: UUID | None  # None: a user-level event (a key created or revoked)
    action: str
    actor_user_id: UUID | None  # None: the operator's CLI, or a deleted user
    actor_email: str | None
    target_user_id: UUID | None
    target_email: str | None
    target_id: str | None
    details: dict[str, Any]  # small JSON values: ids and settings
    request_id: str | None
    created_at: datetime


_COLUMNS = columns(SecurityEvent, prefix="e.", computed={"actor_email": "a.email", "target_email": "t.email"})


class EventFields(TypedDict, total=False):
    """An action's own account of itself: what, who did it, and in which project, to whom or what."""

    action: Required[str]
    actor_user_id: Required[UUID | None]
    project_id: UUID | None
    target_user_id: UUID | None
    target_id: UUID | str | None
    details: dict[str, Any] | None


async def insert_event(
    conn: Connection, *, request_id: str | None = None, retention_days: int, **event: Unpack[EventFields]
) -> None:
    """Writes one event, and drops the events older than `retention_days` (events are rare: this keeps
    the table bounded without a job of its own)."""
    target_id = event.get("target_id")
    await conn.execute(
        "INSERT INTO security_events"
        " (project_id, actor_user_id, action, target_user_id, target_id, details, request_id)"
        " VALUES (%(project_id)s, %(actor)s, %(action)s, %(target_user)s, %(target_id)s, %(details)s,"
        " %(rid)s)",
        {
            "project_id": event.get("project_id"),
            "actor": event["actor_user_id"],
            "action": event["action"],
            "target_user": event.get("target_user_id"),
            "target_id": None if target_id is None else str(target_id),
            "details": Jsonb(event.get("details") or {}),
            "rid": request_id,
        },
    )
    await conn.execute(
        "DELETE FROM security_events WHERE created_at < now() - make_interval(days => %s)", (retention_days,)
    )


async def project_events(
    conn: Connection, *, project_id: UUID, user_id: UUID, page: Page
) -> list[SecurityEvent]:
    """A project's events, newest first, for its owners only (the SQL checks the caller is one)."""
    return await fetch_all(
        conn,
        class_row(SecurityEvent),
        f"SELECT {_COLUMNS} {_FROM} WHERE e.project_id = %(project_id)s AND {owner_of('e.project_id')}"
        " ORDER BY e.id DESC LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page),
    )


async def user_events(conn: Connection, *, user_id: UUID, page: Page) -> list[SecurityEvent]:
    """A user's own account events (keys created and revoked, by them or by the operator), newest first."""
    return await fetch_all(
        conn,
        class_row(SecurityEvent),
        f"SELECT {_COLUMNS} {_FROM} WHERE e.project_id IS NULL AND e.target_user_id = %(user_id)s"
        " ORDER BY e.id DESC LIMIT %(limit)s OFFSET %(offset)s",
        {"user_id": user_id, **page},
    )


async def all_events(conn: Connection, *, page: Page) -> list[SecurityEvent]:
    """Every security event of the server, newest first (administrators only: the route checks)."""
    return await fetch_all(
        conn,
        class_row(SecurityEvent),
        f"SELECT {_COLUMNS} {_FROM} ORDER BY e.id DESC LIMIT %(limit)s OFFSET %(offset)s",
        {**page},
    )


async def mail_sent_today(conn: Connection, *, user_id: UUID, kind: str | None = None) -> int:
    """How many messages (of this kind, or of any) the account had the server send in the last 24 hours:
    the recipients of its `mail.sent` events."""
    return await fetch_required(
        conn,
        scalar_row,
        "SELECT coalesce(sum((details->>'recipients')::int), 0) FROM security_events"
        " WHERE action = 'mail.sent' AND actor_user_id = %(user_id)s"
        " AND created_at > now() - interval '1 day'"
        " AND (%(kind)s::text IS NULL OR details->>'kind' = %(kind)s)",
        {"user_id": user_id, "kind": kind},
    )

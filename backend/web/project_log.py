"""A project's security events as its routes write them: by the caller, in the project the membership
check found, through the request's audit context (backend/web/audit.py) on the caller's connection,
inside the action's own transaction."""

from typing import Any, TypedDict, Unpack
from uuid import UUID

from backend.deps import ProjectAccess
from core.observability.audit import Audit
from core.store.sql.access import Connection


class Target(TypedDict, total=False):
    """What the event is about, as Audit.record takes it."""

    target_user_id: UUID | None
    target_id: UUID | str | None
    details: dict[str, Any] | None


async def record_project_event(
    conn: Connection, audit: Audit, access: ProjectAccess, action: str, **target: Unpack[Target]
) -> None:
    await audit.record(conn, action=action, actor_user_id=access.user.id, project_id=access.id, **target)

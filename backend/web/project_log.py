"""A project's security events (backend/web/security_log.py) as its routes write them: by the
caller, in the project the membership check found."""

from typing import Any, TypedDict, Unpack
from uuid import UUID

from fastapi import Request
from psycopg import AsyncConnection

from backend.deps import ProjectAccess
from backend.web import security_log


class Target(TypedDict, total=False):
    """What the event is about, as security_log.record takes it."""

    target_user_id: UUID | None
    target_id: UUID | str | None
    details: dict[str, Any] | None


async def record_project_event(
    conn: AsyncConnection, request: Request, access: ProjectAccess, action: str, **target: Unpack[Target]
) -> None:
    await security_log.record(
        conn, request, action=action, actor_user_id=access.user.id, project_id=access.id, **target
    )

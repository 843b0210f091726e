"""What the project routes do once the request is parsed and the caller's role checked: create, change
and delete a project, each with its security event in the same transaction. No HTTP here: refusals are
core/errors.py's kinds."""

from typing import Any
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from backend.accounts.service.people import may_create_projects
from backend.deps import ProjectAccess
from backend.projects.schemas import ProjectCreate
from backend.web.project_log import record_project_event
from core.errors import NotAllowed, NotFound, Unprocessable
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, projects
from core.store.accounts.projects import Project

TEACHERS_ONLY = Text("project.teachers_create")
# Project settings whose values go into the security log (names and descriptions only as "changed").
_LOGGED_VALUES = (
    "language",
    "groundedness_sample_rate",
    "max_attempts_per_question",
    "students_study_own_items",
)


def check_sample_rate(rate: float | None, settings: Settings) -> None:
    """A project's own judging rate stays within GROUNDEDNESS_SAMPLE_RATE_MAX, so no member can turn
    every answer into a judge job; only the server's operator raises the cap."""
    if rate is not None and rate > settings.groundedness.sample_rate_max:
        raise Unprocessable(
            Text("project.sample_rate_too_high", max=str(settings.groundedness.sample_rate_max))
        )


async def create_project(
    db: AsyncConnectionPool, audit: Audit, settings: Settings, user_id: UUID, body: ProjectCreate
) -> Project:
    """A new project owned by the caller; refused when the server lets only teachers and administrators
    create projects (PROJECT_CREATORS=teachers) and the caller is neither."""
    check_sample_rate(body.groundedness_sample_rate, settings)
    async with db.connection() as conn, conn.transaction():
        account = await accounts.account(conn, user_id=user_id)
        if account is None or not may_create_projects(account, settings):
            raise NotAllowed(TEACHERS_ONLY)
        row = await projects.create_project(
            conn,
            user_id=user_id,
            name=body.name,
            description=body.description,
            language=body.language,
            groundedness_sample_rate=body.groundedness_sample_rate,
        )
        await audit.record(conn, action="project.created", actor_user_id=user_id, project_id=row.id)
    return row


async def update_project(
    db: AsyncConnectionPool, audit: Audit, access: ProjectAccess, changes: dict[str, Any]
) -> Project:
    """The project with `changes` applied (columns the caller's role may change), logged when any."""
    async with db.connection() as conn:
        async with conn.transaction():
            updated = await projects.update_project(conn, **access.scope, changes=changes)
            if updated and changes:
                values = {key: changes[key] for key in _LOGGED_VALUES if key in changes}
                details = {"changed": sorted(changes), **values}
                await record_project_event(conn, audit, access, "project.updated", details=details)
        row = await projects.get_project(conn, **access.scope)
    if row is None:
        raise NotFound(Text("project.not_found"))
    return row


async def delete_project(db: AsyncConnectionPool, audit: Audit, access: ProjectAccess) -> None:
    async with db.connection() as conn, conn.transaction():
        if await projects.delete_project(conn, **access.scope):
            # Kept after the project (project_id is not a foreign key), for the operator.
            details = {"name": access.project.name}
            await record_project_event(conn, audit, access, "project.deleted", details=details)

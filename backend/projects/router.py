"""Projects (their members: backend/projects/members.py)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Response, status

from backend.accounts.service.people import may_create_projects
from backend.deps import (
    DbDep,
    ProjectAccess,
    ProjectDep,
    ProjectOwnerDep,
    ProjectWriterDep,
    SettingsDep,
    UserDep,
)
from backend.projects.schemas import ProjectCreate, ProjectOut, ProjectUpdate
from backend.web.audit import AuditDep
from backend.web.paging import Page, paging
from backend.web.project_log import record_project_event
from core.settings import Settings
from core.store.accounts import accounts, projects

router = APIRouter(prefix="/projects", tags=["projects"])
TEACHERS_ONLY = "Only teachers and administrators can create projects on this server."


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
        raise HTTPException(
            422,
            f"groundedness_sample_rate may be at most {settings.groundedness.sample_rate_max}"
            " (the server's GROUNDEDNESS_SAMPLE_RATE_MAX).",
        )


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_project(
    body: ProjectCreate, audit: AuditDep, db: DbDep, user: UserDep, settings: SettingsDep
) -> ProjectOut:
    """A new project owned by the caller. 403 when the server lets only teachers and administrators
    create projects (PROJECT_CREATORS=teachers) and the caller is neither."""
    check_sample_rate(body.groundedness_sample_rate, settings)
    async with db.connection() as conn, conn.transaction():
        account = await accounts.account(conn, user_id=user.id)
        if account is None or not may_create_projects(account, settings):
            raise HTTPException(status.HTTP_403_FORBIDDEN, TEACHERS_ONLY)
        row = await projects.create_project(
            conn,
            user_id=user.id,
            name=body.name,
            description=body.description,
            language=body.language,
            groundedness_sample_rate=body.groundedness_sample_rate,
        )
        await audit.record(conn, action="project.created", actor_user_id=user.id, project_id=row.id)
    return ProjectOut.model_validate(row)


@router.get("")
async def list_projects(
    db: DbDep, user: UserDep, page: Annotated[Page, Depends(paging(default=100, most=500))]
) -> list[ProjectOut]:
    """The caller's projects, oldest first, a page at a time."""
    async with db.connection() as conn:
        rows = await projects.list_projects(conn, user_id=user.id, **page)
    return [ProjectOut.model_validate(row) for row in rows]


@router.get("/{project_id}")
async def get_project(access: ProjectDep) -> ProjectOut:
    return ProjectOut.model_validate(access.project)


def _changes(body: ProjectUpdate, access: ProjectAccess) -> dict[str, Any]:
    """The update's columns; 403 for a change only the owner may make."""
    changes = body.model_dump(exclude_none=True)
    if "groundedness_sample_rate" in body.model_fields_set:  # null is a value here: back to the setting
        changes["groundedness_sample_rate"] = body.groundedness_sample_rate
    if "max_attempts_per_question" in body.model_fields_set:  # null is a value here: unlimited
        if access.role != "owner":
            raise HTTPException(
                status.HTTP_403_FORBIDDEN, "Only the project's owner can change attempt limits."
            )
        changes["max_attempts_per_question"] = body.max_attempts_per_question
    if body.students_study_own_items is not None and access.role != "owner":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            "Only the project's owner decides whether members study their own items.",
        )
    if "exam_date" in body.model_fields_set:  # null is a value here: no exam date
        if access.role != "owner":
            raise HTTPException(status.HTTP_403_FORBIDDEN, "Only the project's owner sets the exam date.")
        changes["exam_date"] = body.exam_date
    return changes


@router.patch("/{project_id}")
async def update_project(
    body: ProjectUpdate, audit: AuditDep, access: ProjectWriterDep, db: DbDep, settings: SettingsDep
) -> ProjectOut:
    check_sample_rate(body.groundedness_sample_rate, settings)
    changes = _changes(body, access)
    async with db.connection() as conn:
        async with conn.transaction():
            updated = await projects.update_project(conn, **access.scope, changes=changes)
            if updated and changes:
                values = {key: changes[key] for key in _LOGGED_VALUES if key in changes}
                details = {"changed": sorted(changes), **values}
                await record_project_event(conn, audit, access, "project.updated", details=details)
        row = await projects.get_project(conn, **access.scope)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Project not found.")
    return ProjectOut.model_validate(row)


@router.delete("/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(audit: AuditDep, access: ProjectOwnerDep, db: DbDep) -> Response:
    async with db.connection() as conn, conn.transaction():
        if await projects.delete_project(conn, **access.scope):
            # Kept after the project (project_id is not a foreign key), for the operator.
            details = {"name": access.project.name}
            await record_project_event(conn, audit, access, "project.deleted", details=details)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

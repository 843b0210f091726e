"""Projects (their members: backend/projects/members.py)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Response, status

from backend.deps import (
    DbDep,
    ProjectAccess,
    ProjectDep,
    ProjectOwnerDep,
    ProjectWriterDep,
    SettingsDep,
    UserDep,
)
from backend.projects import service
from backend.projects.schemas import ProjectCreate, ProjectOut, ProjectUpdate
from backend.web.audit import AuditDep
from backend.web.paging import Page, paging
from core.messages import Text
from core.store.accounts import projects

router = APIRouter(prefix="/projects", tags=["projects"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_project(
    body: ProjectCreate, audit: AuditDep, db: DbDep, user: UserDep, settings: SettingsDep
) -> ProjectOut:
    """A new project owned by the caller. 403 when the server lets only teachers and administrators
    create projects (PROJECT_CREATORS=teachers) and the caller is neither."""
    return ProjectOut.model_validate(await service.create_project(db, audit, settings, user.id, body))


@router.get("")
async def list_projects(
    db: DbDep, user: UserDep, page: Annotated[Page, Depends(paging(default=100, most=500))]
) -> list[ProjectOut]:
    """The caller's projects, oldest first, a page at a time."""
    async with db.connection() as conn:
        rows = await projects.list_projects(conn, user_id=user.id, page=page)
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
            raise HTTPException(status.HTTP_403_FORBIDDEN, Text("project.owner_sets_attempt_limits"))
        changes["max_attempts_per_question"] = body.max_attempts_per_question
    if body.students_study_own_items is not None and access.role != "owner":
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            Text("project.owner_sets_own_items"),
        )
    if "exam_date" in body.model_fields_set:  # null is a value here: no exam date
        if access.role != "owner":
            raise HTTPException(status.HTTP_403_FORBIDDEN, Text("project.owner_sets_exam_date"))
        changes["exam_date"] = body.exam_date
    return changes


@router.patch("/{project_id}")
async def update_project(
    body: ProjectUpdate, audit: AuditDep, access: ProjectWriterDep, db: DbDep, settings: SettingsDep
) -> ProjectOut:
    service.check_sample_rate(body.groundedness_sample_rate, settings)
    return ProjectOut.model_validate(await service.update_project(db, audit, access, _changes(body, access)))


@router.delete("/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(audit: AuditDep, access: ProjectOwnerDep, db: DbDep) -> Response:
    await service.delete_project(db, audit, access)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

"""Projects and membership."""

from fastapi import APIRouter, HTTPException, Response, status

from backend.deps import DbDep, ProjectDep, ProjectOwnerDep, ProjectWriterDep, UserDep
from backend.schemas import MemberAdd, MemberOut, ProjectCreate, ProjectOut, ProjectUpdate
from core.store import projects, users

router = APIRouter(prefix="/projects", tags=["projects"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_project(body: ProjectCreate, db: DbDep, user: UserDep) -> ProjectOut:
    async with db.connection() as conn:
        row = await projects.create_project(
            conn,
            user_id=user.id,
            name=body.name,
            description=body.description,
            language=body.language,
            groundedness_sample_rate=body.groundedness_sample_rate,
        )
    return ProjectOut(**row)


@router.get("")
async def list_projects(db: DbDep, user: UserDep) -> list[ProjectOut]:
    async with db.connection() as conn:
        rows = await projects.list_projects(conn, user_id=user.id)
    return [ProjectOut(**row) for row in rows]


@router.get("/{project_id}")
async def get_project(access: ProjectDep) -> ProjectOut:
    return ProjectOut(**access.project)


@router.patch("/{project_id}")
async def update_project(body: ProjectUpdate, access: ProjectWriterDep, db: DbDep) -> ProjectOut:
    changes = body.model_dump(exclude_none=True)
    if "groundedness_sample_rate" in body.model_fields_set:  # null is a value here: back to the setting
        changes["groundedness_sample_rate"] = body.groundedness_sample_rate
    async with db.connection() as conn:
        await projects.update_project(conn, project_id=access.id, user_id=access.user.id, changes=changes)
        row = await projects.get_project(conn, project_id=access.id, user_id=access.user.id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Project not found.")
    return ProjectOut(**row)


@router.delete("/{project_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_project(access: ProjectOwnerDep, db: DbDep) -> Response:
    async with db.connection() as conn:
        await projects.delete_project(conn, project_id=access.id, user_id=access.user.id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{project_id}/members", status_code=status.HTTP_201_CREATED)
async def add_member(body: MemberAdd, access: ProjectOwnerDep, db: DbDep) -> MemberOut:
    async with db.connection() as conn:
        member = await users.user_by_email(conn, email=body.email)
        if member is None:
            raise HTTPException(422, "No user has that email; create it with `studyai users create`.")
        if member["id"] == access.user.id and body.role != "owner":
            raise HTTPException(status.HTTP_409_CONFLICT, "An owner cannot demote themself.")
        await projects.upsert_member(
            conn, project_id=access.id, user_id=access.user.id, member_id=member["id"], role=body.role
        )
    return MemberOut(project_id=access.id, user_id=member["id"], email=member["email"], role=body.role)

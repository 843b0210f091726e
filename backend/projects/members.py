"""A project's members: list, change a role, remove, leave (adding someone is an invitation they accept:
backend/accounts/routers/invitations.py). The last owner can be neither demoted
nor removed (409). Membership is checked in SQL on every request, so a removed member's next request to
the project answers 404; what happens to their personal rows is the forget rule of migrations/0012."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, HTTPException, Response, status

from backend.deps import DbDep, ProjectAccess, ProjectDep, ProjectOwnerDep, project_not_found
from backend.projects.schemas import MemberList, MemberOut, MemberRow, RoleChange
from backend.web.audit import AuditDep
from backend.web.paging import Page, paging
from backend.web.project_log import record_project_event
from core.messages import Text
from core.observability.audit import Audit
from core.store.accounts import accounts, members
from core.store.sql.access import Connection

router = APIRouter(prefix="/projects/{project_id}/members", tags=["members"])

MemberPage = Annotated[Page, Depends(paging(default=100, most=200, offset_most=1_000_000))]


def _refused(change: members.MemberChange) -> HTTPException | None:
    if change.outcome == "last_owner":
        return HTTPException(status.HTTP_409_CONFLICT, Text("member.last_owner"))
    if change.outcome == "forbidden":
        return HTTPException(status.HTTP_403_FORBIDDEN, Text("project.owner_only"))
    if change.outcome == "not_found":
        return HTTPException(status.HTTP_404_NOT_FOUND, Text("member.not_found"))
    return None


async def change_role(
    conn: Connection, audit: Audit, access: ProjectAccess, *, member_id: UUID, role: str, add: bool
) -> members.MemberChange:
    """Gives the member the role (adding them when `add`), logs it; raises 409/403/404 as refused."""
    change = await members.set_role(
        conn, project_id=access.id, actor_id=access.user.id, member_id=member_id, role=role, add=add
    )
    if error := _refused(change):
        raise error
    if change.outcome != "unchanged":
        added = change.outcome == "added"
        await record_project_event(
            conn,
            audit,
            access,
            "member.added" if added else "member.role_changed",
            target_user_id=member_id,
            details={"role": role} if added else {"role": role, "previous_role": change.old_role},
        )
    return change


@router.get("")
async def list_members(access: ProjectDep, db: DbDep, page: MemberPage) -> MemberList:
    """Owners and editors see every member with their email. A viewer (a student) sees only the owners
    and editors (the course staff) and themself, never other students; the counts are the whole
    project's for everyone."""
    async with db.connection() as conn:
        rows, counts = await members.list_members(conn, **access.scope, page=page)
    return MemberList(
        members=[MemberRow.model_validate(member) for member in rows],
        counts=counts,
        total=sum(counts.values()),
        **page,
    )


@router.patch("/{user_id}")
async def set_member_role(
    user_id: UUID, body: RoleChange, audit: AuditDep, access: ProjectOwnerDep, db: DbDep
) -> MemberOut:
    """Changes a member's role. Owners only; demoting the last owner is refused (409)."""
    async with db.connection() as conn:
        async with conn.transaction():
            await change_role(conn, audit, access, member_id=user_id, role=body.role, add=False)
        member = await accounts.account(conn, user_id=user_id)
    if member is None:  # the account was deleted meanwhile
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("member.not_found"))
    return MemberOut(project_id=access.id, user_id=user_id, email=member.email, role=body.role)


@router.delete("/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_member(user_id: UUID, audit: AuditDep, access: ProjectDep, db: DbDep) -> Response:
    """An owner removes a member; any member removes themself (leaves). The last owner can do neither
    (409). The removed member's next request to the project answers 404."""
    leaving = user_id == access.user.id
    async with db.connection() as conn, conn.transaction():
        change = await members.remove(conn, project_id=access.id, actor_id=access.user.id, member_id=user_id)
        if change.outcome == "not_found" and leaving:
            raise project_not_found()  # the caller stopped being a member meanwhile
        if error := _refused(change):
            raise error
        action = "member.left" if leaving else "member.removed"
        details = {"role": change.old_role}
        await record_project_event(conn, audit, access, action, target_user_id=user_id, details=details)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

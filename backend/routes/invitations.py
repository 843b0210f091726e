"""Invitations: a project's owners hand out a code or a link (role, expiry, uses), and people join with
it, signed in or by creating their account then and there (the code is the permission, even while
SIGNUP_ENABLED is false). Wrong codes are limited per address (backend/services/joining.py)."""

from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, Response, status

from backend.deps import DbDep, LimiterDep, ProjectOwnerDep, SameOrigin, SettingsDep, UserDep
from backend.schemas.invitations import (
    InvitationCreate,
    InvitationOut,
    InvitationPreview,
    Join,
    Joined,
    JoinedWithAccount,
    JoinSignup,
)
from backend.services.browser_sessions import public_base
from backend.services.joining import join, refuse, stored_code
from backend.services.paging import PageDep
from backend.services.project_log import record_project_event
from backend.services.project_store import as_member
from backend.services.sign_in import create_password_account, refuse_weak_password, sign_in_browser
from core.accounts import codes
from core.accounts.passwords import hash_password_async
from core.settings import Settings
from core.store import invitations
from core.store.invitations import Invitation

router = APIRouter(tags=["invitations"])
EMAIL_TAKEN = "An account with this email exists: sign in, then join with the code."


def _out(invitation: Invitation, request: Request, settings: Settings) -> InvitationOut:
    shown = codes.display(invitation.code)
    return InvitationOut(
        id=invitation.id,
        code=shown,
        link=f"{public_base(request, settings)}/app/#/join/{shown}",
        role=invitation.role,
        expires_at=invitation.expires_at,
        max_uses=invitation.max_uses,
        uses=invitation.uses,
        revoked_at=invitation.revoked_at,
        created_at=invitation.created_at,
    )


@router.post("/projects/{project_id}/invitations", status_code=status.HTTP_201_CREATED)
async def create_invitation(
    body: InvitationCreate, request: Request, access: ProjectOwnerDep, db: DbDep, settings: SettingsDep
) -> InvitationOut:
    """A new code and link that make whoever joins a member with `role` (owners only)."""
    hours = body.expires_in_hours or settings.accounts.invitation_default_hours
    async with db.connection() as conn, conn.transaction():
        created = await invitations.create(
            conn, **access.scope, role=body.role, hours=hours, max_uses=body.max_uses
        )
        if created is None:  # no longer an owner since the membership check
            raise HTTPException(status.HTTP_403_FORBIDDEN, "Only the project's owner can do this.")
        details = {"role": body.role, "max_uses": body.max_uses, "expires_in_hours": hours}
        await record_project_event(
            conn, request, access, "invitation.created", target_id=created.id, details=details
        )
    return _out(created, request, settings)


@router.get("/projects/{project_id}/invitations")
async def list_invitations(
    request: Request, access: ProjectOwnerDep, db: DbDep, settings: SettingsDep, page: PageDep
) -> list[InvitationOut]:
    """The project's invitations, newest first, revoked and expired ones included (owners only)."""
    rows = await as_member(db, access, invitations.list_for_project, **page)
    return [_out(row, request, settings) for row in rows]


@router.delete("/projects/{project_id}/invitations/{invitation_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_invitation(
    invitation_id: UUID, request: Request, access: ProjectOwnerDep, db: DbDep
) -> Response:
    """Revokes an invitation: its code joins nobody from now on; members who joined stay (owners only)."""
    async with db.connection() as conn, conn.transaction():
        revoked = await invitations.revoke(conn, **access.scope, invitation_id=invitation_id)
        if revoked is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No such invitation, or it is already revoked.")
        details = {"role": revoked.role, "uses": revoked.uses}
        await record_project_event(
            conn, request, access, "invitation.revoked", target_id=revoked.id, details=details
        )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/join/{code}")
async def preview_invitation(
    code: str, request: Request, db: DbDep, limiter: LimiterDep
) -> InvitationPreview:
    """Which project and role a code leads to (public). A wrong code spends the address's budget: 404,
    410 when used up, 429 once the budget is spent."""
    stored = await stored_code(request, limiter, code)
    async with db.connection() as conn:
        found = await invitations.preview(conn, code=stored)
    if found is None or found.used_up:
        await refuse(request, limiter, used_up=found is not None)
    return InvitationPreview.model_validate(found, from_attributes=True)


@router.post("/join")
async def join_project(body: Join, request: Request, db: DbDep, user: UserDep, limiter: LimiterDep) -> Joined:
    """The signed-in caller joins with the code. Already a member: their role stays if it is as high
    (no use spent), else it is raised to the invitation's."""
    stored = await stored_code(request, limiter, body.code)
    async with db.connection() as conn, conn.transaction():
        joined = await join(conn, request, limiter, code=stored, user_id=user.id)
    return Joined.model_validate(joined, from_attributes=True)


@router.post("/join/signup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def join_with_new_account(
    body: JoinSignup,
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    limiter: LimiterDep,
) -> JoinedWithAccount:
    """Creates an account with a password, joins with the code and signs the browser in, in one
    transaction: a wrong code creates nothing. 409 when the email has an account (sign in, then join);
    422 for a weak password."""
    stored = await stored_code(request, limiter, body.code)
    async with db.connection() as conn:
        found = await invitations.preview(conn, code=stored)
    if found is None or found.used_up:  # checked before the password's cost, and to answer it first
        await refuse(request, limiter, used_up=found is not None)
    refuse_weak_password(body.password, settings, body.email)
    password_hash = await hash_password_async(body.password)
    async with db.connection() as conn, conn.transaction():
        account = await create_password_account(
            conn,
            request,
            email=body.email,
            password_hash=password_hash,
            display_name=body.display_name,
            via="invitation",
            taken=EMAIL_TAKEN,
        )
        joined = await join(conn, request, limiter, code=stored, user_id=account.id)
        session = await sign_in_browser(conn, request, response, settings, user_id=account.id, via="signup")
    return JoinedWithAccount(
        project_id=joined.project_id, role=joined.role, project_name=joined.project_name, session=session
    )

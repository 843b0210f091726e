"""Invitations: a project's owners hand out a code or a link (role, expiry, uses) and people join with
it, signed in or by creating their account then and there (the code is the permission, even while
SIGNUP_ENABLED is false); owners also invite one person by e-mail, who accepts or declines once signed in
(GET /me/invitations). Wrong codes spend a budget (backend/accounts/budgets.py)."""

from uuid import UUID

from fastapi import APIRouter, BackgroundTasks, Request, Response, status

from backend.accounts.budgets import BudgetsDep
from backend.accounts.routers.shaping import DoorDep
from backend.accounts.schemas import (
    InvitationCreate,
    InvitationEmail,
    InvitationOut,
    InvitationPreview,
    Join,
    JoinedByCode,
    JoinedWithAccount,
    JoinSignup,
    MailSent,
    MemberAdd,
    MemberInvitationOut,
    MemberInvited,
)
from backend.accounts.service import codes as code_service
from backend.accounts.service import invitations
from backend.deps import DbDep, ProjectOwnerDep, SameOrigin, SettingsDep, UserDep
from backend.web.audit import AuditDep
from backend.web.browser import public_base
from backend.web.paging import PageDep
from core.accounts import codes
from core.settings import Settings
from core.store.accounts.invitations import Invitation

router = APIRouter(tags=["invitations"])
# An owner's mail and the invitations addressed to one person belong with the project's members.
members_router = APIRouter(tags=["members"])


def _out(invitation: Invitation, request: Request, settings: Settings) -> InvitationOut:
    shown = codes.display(invitation.code)
    return InvitationOut(
        id=invitation.id,
        code=shown,
        link=f"{public_base(request, settings)}/app/#/join/{shown}",
        role=invitation.role,  # type: ignore[arg-type]
        expires_at=invitation.expires_at,
        max_uses=invitation.max_uses,
        uses=invitation.uses,
        revoked_at=invitation.revoked_at,
        created_at=invitation.created_at,
    )


@router.post("/projects/{project_id}/invitations", status_code=status.HTTP_201_CREATED)
async def create_invitation(
    body: InvitationCreate,
    request: Request,
    access: ProjectOwnerDep,
    db: DbDep,
    settings: SettingsDep,
    audit: AuditDep,
) -> InvitationOut:
    """A new code and link that make whoever joins a member with `role` (owners only)."""
    created = await code_service.create_code(db, audit, settings, **access.scope, **body.model_dump())
    return _out(created, request, settings)


@router.get("/projects/{project_id}/invitations")
async def list_invitations(
    request: Request, access: ProjectOwnerDep, db: DbDep, settings: SettingsDep, page: PageDep
) -> list[InvitationOut]:
    """The project's invitations, newest first, revoked and expired ones included (owners only)."""
    rows = await code_service.list_codes(db, **access.scope, page=page)
    return [_out(row, request, settings) for row in rows]


@router.delete("/projects/{project_id}/invitations/{invitation_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_invitation(
    invitation_id: UUID, access: ProjectOwnerDep, db: DbDep, audit: AuditDep
) -> Response:
    """Revokes an invitation: its code joins nobody from now on; members who joined stay (owners only)."""
    await invitations.withdraw(db, audit, **access.scope, invitation_id=invitation_id, code=True)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@members_router.post("/projects/{project_id}/invitations/{invitation_id}/email")
async def email_invitation(
    invitation_id: UUID,
    body: InvitationEmail,
    access: ProjectOwnerDep,
    db: DbDep,
    settings: SettingsDep,
    audit: AuditDep,
) -> MailSent:
    """Mails the invitation's join link and code to each address (one message each, within the owner's
    daily mail budget). 409 while mail is not set up (SMTP_HOST and PUBLIC_URL: the app offers the link to
    copy); 404 unless the invitation is this project's and still usable; 502 when the mail server fails."""
    sent = await code_service.mail_code(
        db, audit, settings, **access.scope, invitation_id=invitation_id, emails=body.emails
    )
    return MailSent(sent=sent)


@router.get("/join/{code}")
async def preview_invitation(code: str, db: DbDep, budgets: BudgetsDep) -> InvitationPreview:
    """Which project and role a code leads to (public). 404 for a wrong code, 410 when used up; a wrong
    code spends the address's budget (429 once spent; a right code is never refused)."""
    async with budgets.code():
        found = await code_service.preview(db, code=code)
    return InvitationPreview.model_validate(found, from_attributes=True)


@router.post("/join")
async def join_project(
    body: Join, db: DbDep, user: UserDep, audit: AuditDep, budgets: BudgetsDep
) -> JoinedByCode:
    """The signed-in caller joins with the code. Already a member: their role stays if it is as high
    (no use spent, `outcome` member), else it is raised to the invitation's. A wrong code spends the
    caller's own budget."""
    async with budgets.code(user.id):
        joined = await code_service.join(db, audit, code=body.code, user_id=user.id)
    return JoinedByCode.model_validate(joined, from_attributes=True)


@router.post("/join/signup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def join_with_new_account(body: JoinSignup, door: DoorDep, budgets: BudgetsDep) -> JoinedWithAccount:
    """Creates an account with a password, joins with the code and signs the browser in, in one
    transaction: a wrong code creates nothing. 409 when the email has an account (sign in, then join;
    it spends the address's budget like a wrong code); 422 for a weak password."""
    async with budgets.code():
        joined, signed = await code_service.join_with_new_account(
            door.db, door.audit, door.settings, **body.model_dump()
        )
    joined_as = JoinedByCode.model_validate(joined, from_attributes=True)
    return JoinedWithAccount(**joined_as.model_dump(), session=door.signed_in(signed))


@members_router.post("/projects/{project_id}/members", status_code=status.HTTP_202_ACCEPTED)
async def add_member(
    body: MemberAdd,
    background: BackgroundTasks,
    access: ProjectOwnerDep,
    db: DbDep,
    settings: SettingsDep,
    audit: AuditDep,
) -> MemberInvited:
    """Invites the address with a role (owners only): whoever has it accepts or declines once signed in,
    and is mailed when mail is set up. The answer is the same whether or not the address has an account;
    an existing member's role is changed with PATCH."""
    invited = await invitations.invite_person(
        db, audit, settings, **access.scope, email=body.email, role=body.role
    )
    background.add_task(invited.outbox.send)
    return MemberInvited(
        email=invited.invitation.email,
        role=body.role,
        expires_at=invited.invitation.expires_at,
        mailed=bool(invited.outbox.messages),
    )


@members_router.get("/projects/{project_id}/members/invitations")
async def list_member_invitations(
    access: ProjectOwnerDep, db: DbDep, page: PageDep
) -> list[MemberInvitationOut]:
    """The project's invitations by e-mail that wait for an answer, newest first (owners only)."""
    rows = await invitations.pending_for_project(db, **access.scope, page=page)
    return [MemberInvitationOut.model_validate(row) for row in rows]


@members_router.delete(
    "/projects/{project_id}/members/invitations/{invitation_id}", status_code=status.HTTP_204_NO_CONTENT
)
async def withdraw_member_invitation(
    invitation_id: UUID, access: ProjectOwnerDep, db: DbDep, audit: AuditDep
) -> Response:
    """Withdraws an invitation by e-mail that waits for an answer (owners only)."""
    await invitations.withdraw(db, audit, **access.scope, invitation_id=invitation_id, code=False)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

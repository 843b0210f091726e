"""A project owner's help for its students: a reset link for a viewer (POST
/projects/{id}/members/{uid}/reset-link) and an invitation mailed to a list of addresses (POST
/projects/{id}/invitations/{id}/email). Owners only; what they may do is decided in SQL."""

import smtplib
from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, status

from backend.deps import DbDep, ProjectOwnerDep, SettingsDep
from backend.schemas.admin import InvitationEmail, MailSent, ResetLinkOut
from backend.services import mail, reset_links
from backend.services.browser_sessions import public_base
from core.accounts.codes import display
from core.store import account_admin, accounts
from core.store.invitation_mail import MailedInvitation, live_invitation

router = APIRouter(prefix="/projects/{project_id}", tags=["members"])

_REFUSED = {
    "not_found": (status.HTTP_404_NOT_FOUND, "Member not found."),
    "not_viewer": (
        status.HTTP_403_FORBIDDEN,
        "An owner can make reset links for the project's viewers only: ask an administrator.",
    ),
    "admin": (status.HTTP_403_FORBIDDEN, "This is an administrator's account: ask an administrator."),
    "writer": (
        status.HTTP_403_FORBIDDEN,
        "This account owns or edits a project: only an administrator can make its reset link.",
    ),
}


MAIL_OFF = "Mail is not configured on this server (SMTP_HOST): copy the link instead."


@router.post("/members/{member_id}/reset-link")
async def member_reset_link(
    request: Request, member_id: UUID, access: ProjectOwnerDep, db: DbDep, settings: SettingsDep
) -> ResetLinkOut:
    """A one-time reset link for a viewer of this project who is no administrator and owns or edits no
    project (403 with the reason otherwise), mailed to them when SMTP is set."""
    async with db.connection() as conn, conn.transaction():
        refusal = await account_admin.owner_reset_refusal(
            conn, project_id=access.id, user_id=access.user.id, member_id=member_id
        )
        if refusal is not None:
            raise HTTPException(*_REFUSED[refusal])
        target = await accounts.account(conn, user_id=member_id)
        assert target is not None  # a member
        out = await reset_links.issue(
            conn, request, settings, user_id=member_id, actor_id=access.user.id, project_id=access.id
        )
    return await reset_links.mail_link(settings, target.email, out)


def _invitation_body(invitation: MailedInvitation, link: str) -> str:
    code = display(invitation.code)
    return (
        f"You are invited to the studyAI project “{invitation.project_name}” as a {invitation.role}.\n\n"
        f"Open this link to join:\n{link}\n\nor enter the code {code} in the app."
        f" The invitation works until {invitation.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )


@router.post("/invitations/{invitation_id}/email")
async def email_invitation(
    request: Request,
    invitation_id: UUID,
    body: InvitationEmail,
    access: ProjectOwnerDep,
    db: DbDep,
    settings: SettingsDep,
) -> MailSent:
    """Mails the invitation's join link and code to each address (one message each). 409 while SMTP_HOST
    is unset (a state of the server, not a failure: the app offers the link to copy); 404 unless the
    invitation is this project's and still usable; 502 when the mail server fails."""
    if not settings.smtp.host:
        raise HTTPException(status.HTTP_409_CONFLICT, MAIL_OFF)
    async with db.connection() as conn:
        invitation = await live_invitation(
            conn, project_id=access.id, user_id=access.user.id, invitation_id=invitation_id
        )
    if invitation is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "No such invitation, or it can no longer be used.")
    link = f"{public_base(request, settings)}/app/#/join/{display(invitation.code)}"
    text = _invitation_body(invitation, link)
    subject = f'Join "{invitation.project_name}" on studyAI'
    recipients = list(dict.fromkeys(email.strip().lower() for email in body.emails))
    messages = [mail.message(settings.smtp, to=email, subject=subject, body=text) for email in recipients]
    try:
        sent = await mail.send(settings.smtp, messages)
    except (OSError, smtplib.SMTPException) as error:
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, f"The mail server refused or failed: {error}"
        ) from None
    return MailSent(sent=sent)

"""Invitation codes: a project's owners hand out a code or a link (a role, an expiry, a number of uses)
that joins whoever has it; the code is also the permission to create an account while joining, even with
SIGNUP_ENABLED off. Owners revoke codes with the invitations addressed to one person
(backend/accounts/service/invitations.py: withdraw)."""

from uuid import UUID

from backend.accounts.errors import (
    EmailTaken,
    InvitationUsedUp,
    MailOff,
    NoSuchInvitation,
    NotAllowed,
    NotFound,
)
from backend.accounts.service import mail, people
from backend.accounts.service.people import Person
from backend.accounts.service.sign_in import SignedIn, start
from core.accounts import codes
from core.messages import Text, concerning
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import invitations
from core.store.accounts.invitation_mail import live_invitation
from core.store.accounts.invitations import Invitation, Preview, Redeemed
from core.store.sql.access import Connection
from core.store.sql.listing import Page
from core.store.sql.pool import Database

NO_SUCH_INVITATION = Text("join.no_such_invitation")
USED_UP = Text("join.used_up")
NOT_OWNER = Text("project.owner_only")
JOIN_EMAIL_TAKEN = Text("join.email_taken")
CODES_MAIL_OFF = "Mail is not configured on this server (SMTP_HOST, PUBLIC_URL): copy the link instead."


def stored_code(typed: str) -> str:
    """The code's stored form; NoSuchInvitation for a string that cannot be one."""
    code = codes.normalize(typed)
    if code is None:
        raise NoSuchInvitation(NO_SUCH_INVITATION)
    return code


# Codes: the owner's side


async def create_code(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    project_id: UUID,
    user_id: UUID,
    role: str,
    expires_in_hours: int | None,
    max_uses: int,
) -> Invitation:
    hours = expires_in_hours or settings.accounts.invitation_default_hours
    async with db.connection() as conn, conn.transaction():
        created = await invitations.create(
            conn, project_id=project_id, user_id=user_id, role=role, hours=hours, max_uses=max_uses
        )
        if created is None:  # no longer an owner since the membership check
            raise NotAllowed(NOT_OWNER)
        details = {"role": role, "max_uses": max_uses, "expires_in_hours": hours}
        await audit.event(
            conn, "invitation.created", user_id, None, details, project=project_id, about=created.id
        )
    return created


async def list_codes(db: Database, *, project_id: UUID, user_id: UUID, page: Page) -> list[Invitation]:
    async with db.connection() as conn:
        return await invitations.list_for_project(conn, project_id=project_id, user_id=user_id, page=page)


async def mail_code(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    project_id: UUID,
    user_id: UUID,
    invitation_id: UUID,
    emails: list[str],
) -> int:
    """Mails the code's join link to each address (one message each), within the owner's daily mail
    budget; MailOff while mail is not set up, NotFound unless the invitation is the project's and usable,
    MailFailed when the mail server fails."""
    base = mail.mail_base(settings)
    if base is None:
        raise MailOff(CODES_MAIL_OFF)
    recipients = list(dict.fromkeys(emails))
    async with db.connection() as conn, conn.transaction():
        invitation = await live_invitation(
            conn, project_id=project_id, user_id=user_id, invitation_id=invitation_id
        )
        if invitation is None:
            raise NotFound("No such invitation, or it can no longer be used.")
        await mail.spend_mail_budget(
            conn, audit, settings, sender_id=user_id, kind="invitation", recipients=len(recipients)
        )
    code = codes.display(invitation.code)
    text = (
        f"You are invited to the studyAI project “{invitation.project_name}” as a {invitation.role}.\n\n"
        f"Open this link to join:\n{base}/app/#/join/{code}\n\nor enter the code {code} in the app."
        f" The invitation works until {invitation.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )
    subject = f'Join "{invitation.project_name}" on studyAI'
    messages = [mail.message(settings.smtp, to=email, subject=subject, body=text) for email in recipients]
    return await mail.send_or_fail(settings.smtp, messages)


# Codes: the joining side


async def preview(db: Database, *, code: str) -> Preview:
    """Which project and role a live code leads to; NoSuchInvitation / InvitationUsedUp otherwise."""
    async with db.connection() as conn:
        found = await invitations.preview(conn, code=stored_code(code))
    if found is None:
        raise NoSuchInvitation(NO_SUCH_INVITATION)
    with concerning(found.project_language):  # the code's project is known: its language says it
        if found.used_up:
            raise InvitationUsedUp(USED_UP)
    return found


async def join(db: Database, audit: Audit, *, code: str, user_id: UUID) -> Redeemed:
    """The signed-in caller joins with the code. Already a member: their role stays if it is as high
    (no use spent), else it is raised to the invitation's."""
    stored = stored_code(code)
    async with db.connection() as conn, conn.transaction():
        return await _redeem(conn, audit, stored, user_id)


async def join_with_new_account(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    code: str,
    email: str,
    password: str,
    display_name: str | None,
) -> tuple[Redeemed, SignedIn]:
    """Creates an account with a password, joins with the code and signs the browser in, in one
    transaction: a wrong code creates nothing. The password is hashed before the email is looked up (a
    taken email costs the same time); EmailTaken when it has an account."""
    found = await preview(db, code=code)  # a wrong code is answered before the password's cost
    # Its refusals (a weak password, a taken email) are said in the class's language: the join page's.
    with concerning(found.project_language):
        password_hash = await people.new_password_hash(password, settings, email=email)
        async with db.connection() as conn, conn.transaction():
            person = Person(email=email, display_name=display_name, password_hash=password_hash)
            try:
                account = await people.create(conn, audit, person, via="invitation")
            except EmailTaken:
                raise EmailTaken(JOIN_EMAIL_TAKEN) from None
            joined = await _redeem(conn, audit, stored_code(code), account.id)
            signed_in = await start(conn, audit, settings, user_id=account.id, via="signup")
    return joined, signed_in


async def _redeem(conn: Connection, audit: Audit, code: str, user_id: UUID) -> Redeemed:
    """The join, logged; NoSuchInvitation / InvitationUsedUp when it did not happen. The result names the
    project and the caller's role in it now."""
    redeemed = await invitations.redeem(conn, code=code, user_id=user_id)
    if redeemed.project_id is None or redeemed.project_name is None or redeemed.role is None:
        if redeemed.outcome == "used_up":
            raise InvitationUsedUp(USED_UP)
        raise NoSuchInvitation(NO_SUCH_INVITATION)
    if redeemed.outcome in ("joined", "promoted"):
        details: dict[str, object] = {"role": redeemed.role, "invitation_id": str(redeemed.invitation_id)}
        if redeemed.previous_role is not None:
            details["previous_role"] = redeemed.previous_role
        project, invitation = redeemed.project_id, redeemed.invitation_id
        await audit.event(conn, "member.joined", user_id, user_id, details, project=project, about=invitation)
    return redeemed

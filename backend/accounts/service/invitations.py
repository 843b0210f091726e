"""Invitations addressed to one person: an owner invites an e-mail address with a role, and the account
with that address, once signed in, accepts or declines it. Nobody becomes a member without their own
answer; the owner's answer is the same whether or not the address has an account; and only a proven
address (core/store/accounts/member_invitations.py) sees one. Owners also withdraw them here, and revoke
codes."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import scalar_row

from backend.accounts.errors import NotAllowed, NotFound
from backend.accounts.service import mail
from backend.accounts.service.codes import NOT_OWNER
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import invitations, member_invitations
from core.store.accounts.member_invitations import Answered, PersonalInvitation
from core.store.sql.access import Connection
from core.store.sql.listing import Page
from core.store.sql.pool import Database
from core.store.sql.rows import fetch_required


@dataclass(frozen=True, slots=True)
class PersonInvited:
    invitation: PersonalInvitation
    outbox: mail.Outbox


async def invite_person(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    project_id: UUID,
    user_id: UUID,
    email: str,
    role: str,
) -> PersonInvited:
    """A pending invitation of `email` (whoever has that address accepts it once signed in), mailed to
    the address when mail is set up. The same work and answer whether or not the address has an account:
    nothing here looks the address up."""
    base = mail.mail_base(settings)
    hours = settings.accounts.invitation_default_hours
    async with db.connection() as conn, conn.transaction():
        invited = await member_invitations.invite(
            conn, project_id=project_id, user_id=user_id, email=email, role=role, hours=hours
        )
        if invited is None:
            raise NotAllowed(NOT_OWNER)
        details = {"role": role, "email": email, "mailed": base is not None}
        await audit.event(
            conn, "invitation.sent", user_id, None, details, project=project_id, about=invited.id
        )
        if base is None:
            return PersonInvited(invited, mail.Outbox(settings.smtp, []))
        await mail.spend_mail_budget(conn, audit, settings, sender_id=user_id, kind="member", recipients=1)
        project_name = await _project_name(conn, project_id)
    text = (
        f"You are invited to the studyAI project “{project_name}” as a {role}.\n\n"
        f"Sign in to studyAI with this address to accept or decline it:\n{base}/app/#/account\n\n"
        f"The invitation works until {invited.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )
    message = mail.message(settings.smtp, to=email, subject=f'Join "{project_name}" on studyAI', body=text)
    return PersonInvited(invited, mail.Outbox(settings.smtp, [message]))


async def pending_for_project(
    db: Database, *, project_id: UUID, user_id: UUID, page: Page
) -> list[PersonalInvitation]:
    async with db.connection() as conn:
        return await member_invitations.pending_for_project(
            conn, project_id=project_id, user_id=user_id, page=page
        )


async def withdraw(
    db: Database, audit: Audit, *, project_id: UUID, user_id: UUID, invitation_id: UUID, code: bool
) -> None:
    """An owner revokes a code (its code joins nobody from now on; members who joined stay) or withdraws an
    invitation addressed to one person that waits for an answer; NotFound when there is no such one."""
    ids = {"project_id": project_id, "user_id": user_id, "invitation_id": invitation_id}
    async with db.connection() as conn, conn.transaction():
        if code:
            revoked = await invitations.revoke(conn, **ids)
            details = {"role": revoked.role, "uses": revoked.uses} if revoked else None
            action, gone = "invitation.revoked", "No such invitation, or it is already revoked."
        else:
            withdrawn = await member_invitations.withdraw(conn, **ids)
            details = {"role": withdrawn.role, "email": withdrawn.email} if withdrawn else None
            action, gone = "invitation.withdrawn", "No such invitation, or it is no longer pending."
        if details is None:
            raise NotFound(gone)
        await audit.event(conn, action, user_id, None, details, project=project_id, about=invitation_id)


async def received(db: Database, *, user_id: UUID) -> list[PersonalInvitation]:
    async with db.connection() as conn:
        return await member_invitations.received(conn, user_id=user_id)


async def answer(db: Database, audit: Audit, *, user_id: UUID, invitation_id: UUID, accept: bool) -> Answered:
    """The caller accepts or declines one of their pending invitations; NotFound otherwise."""
    async with db.connection() as conn, conn.transaction():
        answered = await member_invitations.answer(
            conn, user_id=user_id, invitation_id=invitation_id, accept=accept
        )
        if answered is None:
            raise NotFound("No such invitation for you, or it is no longer pending.")
        details: dict[str, object] = {"role": answered.role}
        if answered.previous_role is not None:
            details["previous_role"] = answered.previous_role
        action = "invitation.accepted" if accept else "invitation.declined"
        await audit.event(
            conn, action, user_id, user_id, details, project=answered.project_id, about=answered.id
        )
    return answered


async def _project_name(conn: Connection, project_id: UUID) -> str:
    # The invitation was just made by the project's owner: the project is there.
    return await fetch_required(conn, scalar_row, "SELECT name FROM projects WHERE id = %s", (project_id,))

"""Getting an account back, and the first administrator: one-time tokens spent in one statement.

A reset link reaches only the account's own mailbox ("forgot password", with mail set up) or an
administrator, who hands it over in person; no project owner can make one. Using it sets the password and
ends every session and key of the account. The first-run set-up token makes the first administrator."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from uuid import UUID

from backend.accounts.errors import Gone, MailOff, NotAllowed, NotFound
from backend.accounts.service import credentials, mail, people
from backend.accounts.service.people import Person
from backend.accounts.service.sign_in import SignedIn, start
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import account_admin, accounts
from core.store.sql.access import Connection
from core.store.sql.pool import Database

ALREADY_SET_UP = "This server already has an administrator: sign in."
WRONG_SETUP_TOKEN = (
    "This set-up link is wrong, used or expired: run `studyai users setup-token` on the server for a new one."
)
RESET_GONE = Text("reset.link_gone")
DISABLED = Text("account.disabled")
MAIL_OFF = "Mail is not set up on this server: ask your teacher or an administrator for a reset link."
FORGOT_SENT = "If an account has this email, a link to set a new password has been sent to it."
FORGOT_PER_DAY = 5  # reset mails one account can be sent a day: asking cannot flood a mailbox


@dataclass(frozen=True, slots=True)
class ResetLink:
    link: str
    expires_at: datetime
    mailed: bool = False


async def setup(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    token: str,
    email: str,
    password: str,
    display_name: str | None,
) -> SignedIn:
    """Creates the first administrator, or makes the account with this email one, with this password
    (ending every session and key it had), and signs the browser in. Gone once the server has an
    administrator, or when the token is not a live one."""
    async with db.connection() as conn:
        if await accounts.count_admins(conn) > 0:
            raise Gone(ALREADY_SET_UP)
    password_hash = await people.new_password_hash(password, settings, email=email)
    async with db.connection() as conn, conn.transaction():
        await account_admin.lock_setup(conn)  # a second set-up waits, then finds the administrator
        if await accounts.count_admins(conn) > 0:
            raise Gone(ALREADY_SET_UP)
        if await accounts.spend_token(conn, kind="setup", token=token) is None:
            raise Gone(WRONG_SETUP_TOKEN)
        existing = await accounts.account_by_email(conn, email=email)
        if existing is None:
            person = Person(
                email=email,
                display_name=display_name,
                password_hash=password_hash,
                is_admin=True,
                email_verified=True,  # the operator's set-up token vouches for whoever uses it
            )
            user_id = (await people.create(conn, audit, person, via="setup")).id
        else:
            # The email has an account already: it becomes the administrator, with this password, and
            # whatever its old password or keys opened ends.
            user_id = existing.id
            await accounts.set_password(conn, user_id=user_id, password_hash=password_hash)
            await accounts.set_disabled(conn, user_id=user_id, disabled=False)
            await accounts.set_admin(conn, user_id=user_id)
            await accounts.mark_email_verified(conn, user_id=user_id)
            await credentials.end_all(conn, audit, user_id, reason="setup")
        await audit.own(conn, "user.admin_granted", user_id, {"via": "setup"})
        return await start(conn, audit, settings, user_id=user_id, via="setup")


async def setup_required(db: Database) -> bool:
    """Whether the server has no active administrator yet (the first-run screen asks for the set-up link)."""
    async with db.connection() as conn:
        return await accounts.count_admins(conn) == 0


async def reset_valid(db: Database, *, token: str) -> bool:
    """Whether a reset link still works (the app asks before showing the new-password form)."""
    async with db.connection() as conn:
        target = await account_admin.reset_target(conn, token=token)
    return target is not None and not target.disabled


async def reset(db: Database, audit: Audit, settings: Settings, *, token: str, password: str) -> SignedIn:
    """Sets the account's password with a reset link (once), ends every session and key of the account
    and signs this browser in. Gone when the link is unknown, used or expired; WeakPassword leaves the
    link unspent; NotAllowed while the account is disabled."""
    async with db.connection() as conn:
        target = await account_admin.reset_target(conn, token=token)
    if target is None:
        raise Gone(RESET_GONE)
    if target.disabled:
        raise NotAllowed(DISABLED)
    password_hash = await people.new_password_hash(password, settings, email=target.email)
    async with db.connection() as conn, conn.transaction():
        spent = await accounts.spend_token(conn, kind="reset", token=token)
        if spent is None or spent.user_id != target.user_id:
            raise Gone(RESET_GONE)  # spent by another request meanwhile
        await accounts.set_password(conn, user_id=target.user_id, password_hash=password_hash)
        # A reset link reaches only the address's mailbox or an administrator: the address is proven.
        await accounts.mark_email_verified(conn, user_id=target.user_id)
        ended = await credentials.end_all(conn, audit, target.user_id, reason="password-reset")
        await audit.own(conn, "password.reset_used", target.user_id, {"sessions_ended": ended.sessions})
        return await start(conn, audit, settings, user_id=target.user_id, via="reset")


async def issue_link(
    conn: Connection,
    audit: Audit,
    settings: Settings,
    *,
    base: str,
    user_id: UUID,
    actor_id: UUID | None,
    via: str,
) -> ResetLink:
    """A new reset link for user_id (its earlier ones stop working), logged in the caller's transaction."""
    hours = settings.accounts.reset_link_hours
    token = await accounts.issue_token(conn, kind="reset", hours=hours, user_id=user_id, created_by=actor_id)
    await audit.event(conn, "password.reset_issued", actor_id, user_id, {"via": via, "hours": hours})
    return ResetLink(f"{base}/app/#/reset?token={token}", datetime.now(UTC) + timedelta(hours=hours))


def reset_message(settings: Settings, email: str, link: ResetLink, *, asked: bool) -> EmailMessage:
    """The message that carries a reset link to the account's own address."""
    who = "You (or someone who typed your email) asked for" if asked else "An administrator made"
    body = (
        f"{who} a link to set a new password for your studyAI account:\n\n{link.link}\n\n"
        f"It works once, until {link.expires_at:%Y-%m-%d %H:%M} UTC. Using it signs you out everywhere"
        " else.\nIf you did not ask for it, ignore this message: your password stays as it is.\n"
    )
    return mail.message(settings.smtp, to=email, subject="Set a new studyAI password", body=body)


async def admin_link(
    db: Database, audit: Audit, settings: Settings, *, base: str, admin_id: UUID | None, user_id: UUID
) -> ResetLink:
    """An administrator's reset link for an account, mailed to the account's own address when mail is
    set up (the link's base is then PUBLIC_URL); the administrator may hand it over in person."""
    mailed_base = mail.mail_base(settings)
    async with db.connection() as conn, conn.transaction():
        target = await accounts.account(conn, user_id=user_id)
        if target is None:
            raise NotFound("No such account.")
        link = await issue_link(
            conn,
            audit,
            settings,
            base=mailed_base or base,
            user_id=user_id,
            actor_id=admin_id,
            via="admin" if admin_id else "cli",
        )
    if mailed_base is None:
        return link
    message = reset_message(settings, target.email, link, asked=False)
    return ResetLink(link.link, link.expires_at, mailed=await mail.send_quietly(settings.smtp, message))


async def forgot(db: Database, audit: Audit, settings: Settings, *, email: str) -> mail.Outbox:
    """A reset link for the account with this email, if there is one (enabled, and fewer than
    FORGOT_PER_DAY asked today), to be mailed to that address: the Outbox the route sends after answering,
    so the answer and its time are the same whatever the email (MailOff while mail is not set up)."""
    base = mail.mail_base(settings)
    if base is None:
        raise MailOff(MAIL_OFF)
    async with db.connection() as conn, conn.transaction():
        target = await accounts.account_by_email(conn, email=email)
        if target is None or target.disabled_at is not None:
            return mail.Outbox(settings.smtp, [])
        # Past the account's own limits nothing is sent, and the answer stays the same: a stranger learns
        # nothing from them, and cannot flood the mailbox.
        if not await mail.within_budget(conn, settings, user_id=target.id, kind="reset", most=FORGOT_PER_DAY):
            return mail.Outbox(settings.smtp, [])
        await mail.spend_mail_budget(conn, audit, settings, sender_id=target.id, kind="reset", recipients=1)
        link = await issue_link(
            conn, audit, settings, base=base, user_id=target.id, actor_id=None, via="forgot"
        )
        await audit.own(conn, "password.reset_requested", target.id, {})
    return mail.Outbox(settings.smtp, [reset_message(settings, target.email, link, asked=True)])

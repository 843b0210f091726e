"""Plain-text mail through the school's SMTP server (settings.smtp), with the standard library's smtplib
in a thread so the event loop never waits on the network. Mail is on only with SMTP_HOST and PUBLIC_URL
both set (mailed links are built from PUBLIC_URL alone), and each account has a daily budget."""

import asyncio
import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from uuid import UUID

from backend.accounts.errors import Conflict, MailFailed
from core.observability.audit import Audit
from core.settings import Settings
from core.settings.accounts import SmtpSettings
from core.store.accounts import security_events
from core.store.sql.access import Connection

_TIMEOUT_S = 20
log = logging.getLogger("studyai.mail")


class MailNotConfigured(RuntimeError):
    """SMTP_HOST is unset."""


@dataclass(frozen=True, slots=True)
class Outbox:
    """Messages to send once the answer is out (a route's background task), so how long a request takes
    never tells whether a message was written."""

    smtp: SmtpSettings
    messages: list[EmailMessage]

    async def send(self) -> None:
        for mail in self.messages:
            await send_quietly(self.smtp, mail)


def message(smtp: SmtpSettings, *, to: str, subject: str, body: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = smtp.sender
    mail["To"] = to
    mail["Subject"] = " ".join(subject.split())  # a name with a line break must not break the header
    mail.set_content(body)
    return mail


def _send(smtp: SmtpSettings, messages: list[EmailMessage]) -> int:
    if not smtp.host:
        raise MailNotConfigured("Mail is not configured (SMTP_HOST).")
    context = ssl.create_default_context()
    client: smtplib.SMTP
    if smtp.security == "tls":
        client = smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=_TIMEOUT_S, context=context)
    else:
        client = smtplib.SMTP(smtp.host, smtp.port, timeout=_TIMEOUT_S)
    with client:
        if smtp.security == "starttls":
            client.starttls(context=context)
        if smtp.username:
            client.login(smtp.username, smtp.password or "")
        # One message per recipient: no one sees the others' addresses.
        for mail in messages:
            client.send_message(mail)
    return len(messages)


async def send(smtp: SmtpSettings, messages: list[EmailMessage]) -> int:
    """Sends the messages over one connection; the number sent. Raises MailNotConfigured, or OSError /
    smtplib.SMTPException when the server cannot be reached or refuses."""
    return await asyncio.to_thread(_send, smtp, messages)


async def send_or_fail(smtp: SmtpSettings, messages: list[EmailMessage]) -> int:
    """send(), with a mail server's refusal or silence as MailFailed (the person sees why)."""
    try:
        return await send(smtp, messages)
    except (OSError, smtplib.SMTPException) as error:
        raise MailFailed(f"The mail server refused or failed: {error}") from None


async def send_quietly(smtp: SmtpSettings, mail: EmailMessage) -> bool:
    """Whether the message went out: a failure is logged, not raised (the caller shows the link instead)."""
    if not smtp.host:
        return False
    try:
        await send(smtp, [mail])
    except (OSError, smtplib.SMTPException) as error:
        log.warning("mail to %s not sent: %s", mail["To"], error)
        return False
    return True


def mail_base(settings: Settings) -> str | None:
    """The base of links that are mailed: PUBLIC_URL, and only while mail is set up (SMTP_HOST too). A
    request's Host header never makes a mailed link: it is the sender's to choose."""
    if settings.smtp.host and settings.accounts.public_url:
        return settings.accounts.public_url
    return None


async def within_budget(conn: Connection, settings: Settings, *, user_id: UUID, kind: str, most: int) -> bool:
    """Whether one more message of `kind` keeps the account within `most` of that kind a day and within
    MAIL_PER_USER_DAY in all."""
    if await security_events.mail_sent_today(conn, user_id=user_id, kind=kind) >= most:
        return False
    return await security_events.mail_sent_today(conn, user_id=user_id) < settings.accounts.mail_per_user_day


async def spend_mail_budget(
    conn: Connection, audit: Audit, settings: Settings, *, sender_id: UUID | None, kind: str, recipients: int
) -> None:
    """Counts `recipients` messages against the sender's MAIL_PER_USER_DAY (a `mail.sent` event, in the
    caller's transaction); Conflict when the day's budget would be exceeded. A message no one
    signed in asked for (a forgotten password) counts against the account it goes to."""
    budget = settings.accounts.mail_per_user_day
    if sender_id is None:  # the operator's command line: no budget
        return
    sent = await security_events.mail_sent_today(conn, user_id=sender_id)
    if sent + recipients > budget:
        raise Conflict(
            f"This account has had {sent} messages sent today; the limit is {budget} a day. Try tomorrow."
        )
    await audit.event(conn, "mail.sent", sender_id, sender_id, {"kind": kind, "recipients": recipients})

"""Plain-text mail through the school's SMTP server (settings.smtp; off while SMTP_HOST is unset), with
the standard library's smtplib in a thread so the event loop never waits on the network."""

import asyncio
import logging
import smtplib
import ssl
from email.message import EmailMessage

from core.settings.accounts import SmtpSettings

_TIMEOUT_S = 20
log = logging.getLogger("studyai.mail")


class MailNotConfigured(RuntimeError):
    """SMTP_HOST is unset."""


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

"""The refusals of the accounts domain, each one of core/errors.py's kinds. A service raises them with the
sentence the person reads; backend/web/errors.py gives each kind its one HTTP status."""

from core import errors


class AccountError(errors.Refusal):
    """A refusal; `str(error)` is the sentence shown to the person."""


class WrongCredentials(AccountError, errors.WrongCredentials):
    """An email and password (or another credential) that do not sign anyone in."""


class NotAllowed(AccountError, errors.NotAllowed):
    """The caller may not do this (not an administrator, a disabled account, a stale proof)."""


class WrongPassword(NotAllowed):
    """The current password given to change it is wrong (the session is someone's: 403, not 401)."""


class NotFound(AccountError, errors.NotFound):
    """No such account, session, key or invitation of the caller's."""


class NoSuchInvitation(NotFound):
    """A code that is unknown, revoked or expired (a wrong code: it spends the join budget)."""


class Conflict(AccountError, errors.Conflict):
    """The server's state refuses it (the email has an account, mail is off, a cap is reached)."""


class EmailTaken(Conflict):
    """An account already has this email."""


class MailOff(Conflict):
    """Mail is not set up on this server (PUBLIC_URL and SMTP_HOST)."""


class Gone(AccountError, errors.Gone):
    """A one-time secret used, expired or never issued, or a set-up already done."""


class InvitationUsedUp(Gone):
    """Every use of the invitation is spent (a wrong code for the join budget, too)."""


class MailFailed(AccountError, errors.UpstreamFailed):
    """The school's mail server refused or could not be reached."""

"""The kinds of refusal a domain service raises, with the sentence the person reads (`str(error)`).
Services know no HTTP: backend/web/errors.py gives each kind its one status, for every domain."""


class Refusal(Exception):
    """A request refused; `retry_after_s`: when trying again may succeed (a budget that frees up)."""

    def __init__(self, message: str = "", *, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WrongCredentials(Refusal):
    """Credentials that do not sign anyone in."""


class NotAllowed(Refusal):
    """The caller may not do this."""


class NotFound(Refusal):
    """No such thing the caller may see (the same answer whether it exists or not)."""


class Conflict(Refusal):
    """The server's state refuses it."""


class Gone(Refusal):
    """A one-time thing already used or expired."""


class TooLarge(Refusal):
    """Past a size limit: a file, or a project's storage."""


class UnsupportedType(Refusal):
    """A file of a type the product does not read."""


class Unprocessable(Refusal):
    """Well-formed but unusable input (an empty file)."""


class TooMany(Refusal):
    """Past a rate or a queue budget; says when to retry."""


class UpstreamFailed(Refusal):
    """A service the request needed (the school's mail server) refused or could not be reached."""


class Unavailable(Refusal):
    """A part of the product is down (the job queue); try again later."""


class StorageFull(Refusal):
    """The database's disk is nearly full: the client can do nothing about it."""

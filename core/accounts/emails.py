"""E-mail addresses as accounts keep them: one normal form (surrounding spaces dropped, lower case),
applied once where an address enters (the API's `Email` type, the command line, an identity provider's
claim), so every lookup and every unique index compares the same string."""

import re

MAX_LENGTH = 254  # RFC 5321's path limit
_SHAPE = re.compile(r"[^@\s]+@[^@\s]+")


class NotAnEmail(ValueError):
    """The text cannot be an e-mail address."""


def normalize_email(text: str) -> str:
    email = text.strip().lower()
    if len(email) < 3 or len(email) > MAX_LENGTH or not _SHAPE.fullmatch(email):
        raise NotAnEmail("not an e-mail address")
    return email

"""Random secrets and how they are stored: only a secret's sha256 reaches the database (session cookies,
reset links, the set-up token), so a copy of the database signs nobody in."""

import hashlib
import secrets


def new_token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time comparison of two secrets."""
    return secrets.compare_digest(a.encode(), b.encode())

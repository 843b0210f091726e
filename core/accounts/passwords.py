"""Passwords: Argon2id through argon2-cffi (its RFC 9106 low-memory profile), a minimum length and a check
against the common passwords zxcvbn ships. Hashing and verifying cost ~50 ms of CPU and 64 MiB each, so
the API runs them in a thread (`hash_password_async`), never on the event loop."""

import asyncio
import string
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from core.messages import Text

_HASHER = PasswordHasher()  # Argon2id, RFC 9106 low-memory parameters; stateless and thread-safe
# A hash of a random password, verified against when an account has none, so a wrong email costs the same
# time as a wrong password (no account enumeration by timing).
_DUMMY_HASH = _HASHER.hash("not-a-password-of-anyone-2f9c")


MAX_LENGTH = 1024
# What people add around a common word to pass a rule ("password123456", "!sunshine2024").
_AFFIXES = string.digits + string.punctuation + " "


class WeakPassword(ValueError):
    """A password refused at sign-up, change or reset; the message (a core.messages.Text) says why."""


@cache
def _common_passwords() -> frozenset[str]:
    from zxcvbn.frequency_lists import FREQUENCY_LISTS

    return frozenset(FREQUENCY_LISTS["passwords"])


def check_password(password: str, *, min_length: int, email: str | None = None) -> None:
    """Raises WeakPassword with the reason, else returns."""
    if len(password) < min_length:
        raise WeakPassword(Text("password.too_short", min_length=min_length))
    if len(password) > MAX_LENGTH:
        raise WeakPassword(Text("password.too_long", max_length=MAX_LENGTH))
    lowered = password.lower()
    # A common password with digits or symbols added is as guessable as the word itself: cracking rules
    # try those affixes first.
    stem = lowered.strip(_AFFIXES)
    if lowered in _common_passwords() or stem in _common_passwords() or len(set(lowered)) <= 2:
        raise WeakPassword(Text("password.too_common"))
    if email and lowered in {email.lower(), email.split("@")[0].lower()}:
        raise WeakPassword(Text("password.is_email"))


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Whether the password matches; an account without a password matches nothing (same cost)."""
    try:
        return _HASHER.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def hash_password_async(password: str) -> str:
    return await asyncio.to_thread(hash_password, password)


async def verify_password_async(password_hash: str | None, password: str) -> bool:
    return await asyncio.to_thread(verify_password, password_hash, password)

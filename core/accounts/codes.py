"""Invitation codes: 10 characters of Crockford's base32 (50 bits), shown as XXXXX-XXXXX. Read
case-insensitively, without separators or spaces, with the letters people confuse (O, I, L) read as the
digits they stand for."""

import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford: no I, L, O, U
CODE_LENGTH = 10  # 32**10 = 2**50 codes
_CONFUSED = str.maketrans({"O": "0", "I": "1", "L": "1"})


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalize(typed: str) -> str | None:
    """The stored form of a code as someone typed it, or None when it cannot be one."""
    code = "".join(ch for ch in typed.upper() if not ch.isspace() and ch != "-").translate(_CONFUSED)
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def display(code: str) -> str:
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"

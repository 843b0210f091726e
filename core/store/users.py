"""Users and their API keys (stored as sha256; the key itself is shown once)."""

import hashlib
import secrets
from typing import Any

from psycopg import AsyncConnection

KEY_PREFIX = "sk-studyai-"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def create_user(conn: AsyncConnection, *, email: str) -> dict[str, Any]:
    cur = await conn.execute(
        "INSERT INTO users (email) VALUES (%(email)s)"
        " ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email RETURNING id, email, created_at",
        {"email": email.strip().lower()},
    )
    return await cur.fetchone()  # type: ignore[return-value]


async def create_api_key(conn: AsyncConnection, *, user_id: Any, name: str = "default") -> str:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    await conn.execute(
        "INSERT INTO api_keys (user_id, key_hash, key_prefix, name)"
        " VALUES (%(user_id)s, %(key_hash)s, %(prefix)s, %(name)s)",
        {"user_id": user_id, "key_hash": hash_key(key), "prefix": key[:16], "name": name},
    )
    return key


async def user_for_key(conn: AsyncConnection, key: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        "UPDATE api_keys k SET last_used_at = now() FROM users u"
        " WHERE k.key_hash = %(key_hash)s AND k.revoked_at IS NULL AND u.id = k.user_id"
        " RETURNING u.id, u.email",
        {"key_hash": hash_key(key)},
    )
    return await cur.fetchone()


async def user_by_email(conn: AsyncConnection, *, email: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        "SELECT id, email FROM users WHERE email = %(email)s", {"email": email.strip().lower()}
    )
    return await cur.fetchone()

"""API keys of accounts (stored as sha256; the key itself is shown once). The account itself:
core/store/accounts/accounts.py."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required

KEY_PREFIX = "sk-studyai-"
# Seconds between two writes of a key's last_used_at: a read-mostly check stays a read.
LAST_USED_RESOLUTION_S = 60
_LIVE = "k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())"


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """The user a live key belongs to, and the key's id."""

    id: UUID
    email: str
    is_admin: bool
    key_id: UUID


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored key: never the key itself or its hash; `prefix` is its first characters."""

    id: UUID
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    user_id: UUID


_KEY_COLUMNS = columns(ApiKey, computed={"prefix": "key_prefix"})


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


async def create_api_key(
    conn: Connection,
    *,
    user_id: UUID,
    name: str = "default",
    expires_at: datetime | None = None,
) -> str:
    key, _ = await create_api_key_row(conn, user_id=user_id, name=name, expires_at=expires_at)
    return key


async def create_api_key_row(
    conn: Connection,
    *,
    user_id: UUID,
    name: str = "default",
    expires_at: datetime | None = None,
) -> tuple[str, ApiKey]:
    """A new key and its stored record (no hash in it). The key itself exists only in the return value."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = await fetch_required(
        conn,
        class_row(ApiKey),
        "INSERT INTO api_keys (user_id, key_hash, key_prefix, name, expires_at)"
        " VALUES (%(user_id)s, %(key_hash)s, %(prefix)s, %(name)s, %(expires_at)s)"
        f" RETURNING {_KEY_COLUMNS}",
        {
            "user_id": user_id,
            "key_hash": hash_key(key),
            "prefix": key[:16],
            "name": name,
            "expires_at": expires_at,
        },
    )
    return key, row


async def user_for_key(conn: Connection, key: str) -> KeyHolder | None:
    """The user of a live key (not revoked, not expired, account not disabled) with the key's id, else
    None. Checked in SQL on every request, so a revocation or an expiry takes effect on the next one.
    last_used_at is bumped in the same statement, at most once per LAST_USED_RESOLUTION_S."""
    return await fetch_one(
        conn,
        class_row(KeyHolder),
        f"WITH k AS (SELECT k.id, k.user_id, k.last_used_at FROM api_keys k"
        f"  WHERE k.key_hash = %(key_hash)s AND {_LIVE}),"
        " touched AS (UPDATE api_keys a SET last_used_at = now() FROM k WHERE a.id = k.id"
        "  AND (k.last_used_at IS NULL OR k.last_used_at < now() - make_interval(secs => %(resolution)s)))"
        " SELECT u.id, u.email, u.is_admin, k.id AS key_id FROM k JOIN users u ON u.id = k.user_id"
        " WHERE u.disabled_at IS NULL",
        {"key_hash": hash_key(key), "resolution": LAST_USED_RESOLUTION_S},
    )


async def list_keys(conn: Connection, *, user_id: UUID) -> list[ApiKey]:
    """A user's keys, newest first, revoked and expired ones included; never the hash."""
    return await fetch_all(
        conn,
        class_row(ApiKey),
        f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE user_id = %(user_id)s ORDER BY created_at DESC, id",
        {"user_id": user_id},
    )


async def count_live_keys(conn: Connection, *, user_id: UUID) -> int:
    return await fetch_required(
        conn,
        scalar_row,
        f"SELECT count(*) AS n FROM api_keys k WHERE k.user_id = %(user_id)s AND {_LIVE}",
        {"user_id": user_id},
    )


async def revoke_key(conn: Connection, *, user_id: UUID, key_id: UUID) -> ApiKey | None:
    """Revokes one of the user's own live keys; the key, or None when the user has no such unrevoked key
    (another user's key id is indistinguishable from a missing one)."""
    return await fetch_one(
        conn,
        class_row(ApiKey),
        "UPDATE api_keys SET revoked_at = now()"
        " WHERE id = %(key_id)s AND user_id = %(user_id)s AND revoked_at IS NULL"
        f" RETURNING {_KEY_COLUMNS}",
        {"key_id": key_id, "user_id": user_id},
    )


async def has_key(conn: Connection, *, user_id: UUID, key_id: UUID) -> bool:
    cur = await conn.execute("SELECT 1 FROM api_keys WHERE id = %s AND user_id = %s", (key_id, user_id))
    return await cur.fetchone() is not None


async def keys_matching(conn: Connection, *, id_or_prefix: str) -> list[ApiKey]:
    """Operator look-up (CLI): the key with this id, this whole key, or a stored prefix that starts with
    this (at least one character past "sk-studyai-")."""
    return await fetch_all(
        conn,
        class_row(ApiKey),
        f"SELECT {_KEY_COLUMNS} FROM api_keys"
        " WHERE id::text = %(value)s OR key_hash = %(hash)s"
        "  OR (length(%(value)s) > %(fixed)s AND left(key_prefix, length(%(value)s)) = %(value)s)"
        " ORDER BY created_at",
        {"value": id_or_prefix, "hash": hash_key(id_or_prefix), "fixed": len(KEY_PREFIX)},
    )


async def revoke_all_keys(conn: Connection, *, user_id: UUID) -> list[ApiKey]:
    """Revokes every live key of the user; the keys revoked now."""
    return await fetch_all(
        conn,
        class_row(ApiKey),
        f"UPDATE api_keys SET revoked_at = now() WHERE user_id = %(user_id)s AND revoked_at IS NULL"
        f" RETURNING {_KEY_COLUMNS}",
        {"user_id": user_id},
    )

"""The caller's own API keys and account events."""

from dataclasses import asdict
from typing import Any
from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, Response, status
from psycopg import AsyncConnection

from backend.deps import CurrentUser, DbDep, SettingsDep, UserDep
from backend.schemas.account import KeyCreate, KeyCreated, KeyOut, SecurityEventOut
from backend.services import security_log
from backend.services.paging import EventPageDep
from core.store import security_events, users
from core.store.users import ApiKey

router = APIRouter(prefix="/me", tags=["account"])


@router.get("/keys")
async def list_keys(db: DbDep, user: UserDep) -> list[KeyOut]:
    """Every key of the caller, newest first, revoked and expired ones included."""
    async with db.connection() as conn:
        rows = await users.list_keys(conn, user_id=user.id)
    return [KeyOut.model_validate(row) for row in rows]


@router.post("/keys", status_code=status.HTTP_201_CREATED)
async def create_key(
    body: KeyCreate, request: Request, db: DbDep, user: UserDep, settings: SettingsDep
) -> KeyCreated:
    """A new key, returned once in `key`. At most API_KEYS_MAX_PER_USER live keys per user (409)."""
    expires_at = body.expiry()
    async with db.connection() as conn, conn.transaction():
        # Serialises a user's key creations, so concurrent requests cannot pass the cap together.
        await conn.execute("SELECT 1 FROM users WHERE id = %s FOR NO KEY UPDATE", (user.id,))
        if await users.count_live_keys(conn, user_id=user.id) >= settings.limits.api_keys_max_per_user:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                f"You already have {settings.limits.api_keys_max_per_user} live keys; revoke one first.",
            )
        key, row = await users.create_api_key_row(
            conn, user_id=user.id, name=body.name, expires_at=expires_at
        )
        expires = expires_at.isoformat() if expires_at else None
        await _log_key(conn, request, user, "key.created", row, expires_at=expires)
    return KeyCreated(**asdict(row), key=key)


@router.delete("/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_key(key_id: UUID, request: Request, db: DbDep, user: UserDep) -> Response:
    """Revokes one of the caller's keys (the one in use too): it fails on the next request, everywhere."""
    async with db.connection() as conn, conn.transaction():
        row = await users.revoke_key(conn, user_id=user.id, key_id=key_id)
        if row is None:
            if await users.has_key(conn, user_id=user.id, key_id=key_id):  # revoked before: nothing to do
                return Response(status_code=status.HTTP_204_NO_CONTENT)
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Key not found.")
        await _log_key(conn, request, user, "key.revoked", row, own_key=row.id == user.key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def _log_key(
    conn: AsyncConnection, request: Request, user: CurrentUser, action: str, key: ApiKey, **details: Any
) -> None:
    """The caller's own key event: the key's name and prefix (never the key), and the action's details."""
    await security_log.record(
        conn,
        request,
        action=action,
        actor_user_id=user.id,
        target_user_id=user.id,
        target_id=key.id,
        details={"name": key.name, "prefix": key.prefix, **details},
    )


@router.get("/audit")
async def my_events(db: DbDep, user: UserDep, page: EventPageDep) -> list[SecurityEventOut]:
    """The caller's account events (keys created and revoked, by them or by the operator), newest first."""
    async with db.connection() as conn:
        rows = await security_events.user_events(conn, user_id=user.id, **page)
    return [SecurityEventOut.model_validate(row) for row in rows]

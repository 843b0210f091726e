"""The security events of the routes outside a domain package (projects, members, documents): written
through the request's audit context (backend/web/audit.py) on the caller's connection, inside the
action's own transaction.

Not backend/services/audit.py: that one records agent requests (query_history); this records who changed
membership, documents and project settings."""

from typing import Any, Unpack
from uuid import UUID

from fastapi import Request
from psycopg import AsyncConnection

from backend.web.audit import audit_of
from core.store.security_events import EventFields


async def record(conn: AsyncConnection, request: Request, **event: Unpack[EventFields]) -> None:
    await audit_of(request).record(conn, **event)


async def record_own(
    conn: AsyncConnection,
    request: Request,
    action: str,
    user_id: UUID,
    details: dict[str, Any],
    *,
    target_id: UUID | str | None = None,
) -> None:
    """An account's event about itself."""
    await audit_of(request).own(conn, action, user_id, details, target_id=target_id)

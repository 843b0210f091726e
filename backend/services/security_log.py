"""The API's side of the security event log (core/store/security_events.py): one row per security-relevant
action, written on the caller's connection inside the action's own transaction (an action that rolls
back leaves no event), with the request id, plus one JSON log line for log shippers.

Not backend/services/audit.py: that one records agent requests (query_history); this records who changed keys,
membership, documents and project settings."""

import logging
from typing import Any, Unpack
from uuid import UUID

from fastapi import Request
from psycopg import AsyncConnection

from backend.deps import get_settings
from backend.middleware.request_context import log_json, request_id
from core.store import security_events
from core.store.security_events import EventFields

# The log line names who did what to whom; details stay in the table.
_LOGGED = ("actor_user_id", "project_id", "target_user_id", "target_id")


async def record(conn: AsyncConnection, request: Request, **event: Unpack[EventFields]) -> None:
    settings = get_settings(request)
    rid = request_id(request)
    await security_events.insert_event(
        conn, request_id=rid, retention_days=settings.retention.security_events_days, **event
    )
    logged = {key: event.get(key) for key in _LOGGED}
    log_json(logging.INFO, "security_event", action=event["action"], request_id=rid, **logged)


async def record_own(
    conn: AsyncConnection,
    request: Request,
    action: str,
    user_id: UUID,
    details: dict[str, Any],
    *,
    target_id: UUID | str | None = None,
) -> None:
    """An account's event about itself (it signed up, started or ended a session, linked an identity)."""
    await record(
        conn,
        request,
        action=action,
        actor_user_id=user_id,
        target_user_id=user_id,
        target_id=target_id,
        details=details,
    )

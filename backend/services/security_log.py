"""The API's side of the security event log (core/store/security_events.py): one row per security-relevant
action, written on the caller's connection inside the action's own transaction (an action that rolls
back leaves no event), with the request id, plus one JSON log line for log shippers.

Not backend/services/audit.py: that one records agent requests (query_history); this records who changed keys,
membership, documents and project settings."""

import logging
from typing import Any
from uuid import UUID

from fastapi import Request
from psycopg import AsyncConnection

from backend.deps import get_settings
from backend.middleware.request_context import log_json, request_id
from core.store import security_events


async def record(
    conn: AsyncConnection,
    request: Request,
    *,
    action: str,
    actor_user_id: UUID | None,
    project_id: UUID | None = None,
    target_user_id: UUID | None = None,
    target_id: UUID | str | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    settings = get_settings(request)
    rid = request_id(request)
    await security_events.insert_event(
        conn,
        action=action,
        actor_user_id=actor_user_id,
        project_id=project_id,
        target_user_id=target_user_id,
        target_id=target_id,
        details=details,
        request_id=rid,
        retention_days=settings.retention.security_events_days,
    )
    log_json(
        logging.INFO,
        "security_event",
        action=action,
        request_id=rid,
        actor_user_id=actor_user_id,
        project_id=project_id,
        target_user_id=target_user_id,
        target_id=target_id,
    )

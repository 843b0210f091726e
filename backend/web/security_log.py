"""The security events of the routes outside a domain package (projects, members, documents): written
through the request's audit context (backend/web/audit.py) on the caller's connection, inside the
action's own transaction.

Not backend/web/run_audit.py: that one records agent requests (query_history); this records who changed
membership, documents and project settings."""

from typing import Unpack

from fastapi import Request
from psycopg import AsyncConnection

from backend.web.audit import audit_of
from core.store.accounts.security_events import EventFields


async def record(conn: AsyncConnection, request: Request, **event: Unpack[EventFields]) -> None:
    await audit_of(request).record(conn, **event)

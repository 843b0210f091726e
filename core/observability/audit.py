"""Who an action came from and how its security event is written: one row in security_events
(core/store/accounts/security_events.py) on the action's own connection, inside its transaction (an action
that rolls back leaves no event), and one JSON log line for log shippers naming who did what to whom.

Plain values only: the API builds one per request (backend/web/audit.py), the command line one with no
request id, so the services that write events know nothing of HTTP."""

import logging
from dataclasses import dataclass
from typing import Any, Unpack
from uuid import UUID

from core.observability.jsonlog import log_json
from core.store.accounts import security_events
from core.store.accounts.security_events import EventFields
from core.store.sql.access import Connection

# The log line names who did what to whom; details stay in the table.
_LOGGED = ("actor_user_id", "project_id", "target_user_id", "target_id")


@dataclass(frozen=True, slots=True)
class Audit:
    """The request an action came from (none from the command line) and the events' retention."""

    retention_days: int
    request_id: str | None = None
    address: str | None = None
    user_agent: str | None = None

    async def record(self, conn: Connection, **event: Unpack[EventFields]) -> None:
        await security_events.insert_event(
            conn, request_id=self.request_id, retention_days=self.retention_days, **event
        )
        logged = {key: event.get(key) for key in _LOGGED}
        log_json(logging.INFO, "security_event", action=event["action"], request_id=self.request_id, **logged)

    async def event(
        self,
        conn: Connection,
        action: str,
        actor: UUID | None,
        target: UUID | None = None,
        details: dict[str, Any] | None = None,
        *,
        project: UUID | None = None,
        about: UUID | str | None = None,
    ) -> None:
        """One event, positionally: what, who did it (None: the operator's command line), to whom, with
        what details; in which project and about which row, when it is about one."""
        await self.record(
            conn,
            action=action,
            actor_user_id=actor,
            target_user_id=target,
            project_id=project,
            target_id=about,
            details=details or {},
        )

    async def own(
        self,
        conn: Connection,
        action: str,
        user_id: UUID,
        details: dict[str, Any] | None = None,
        *,
        target_id: UUID | str | None = None,
    ) -> None:
        """An account's event about itself (it signed up, started or ended a session, linked a login)."""
        await self.event(conn, action, user_id, user_id, details, about=target_id)

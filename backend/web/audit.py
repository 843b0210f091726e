"""The audit context of a request (core/observability/audit.py): its id, the client's address and
browser, and the events' retention, as the services that write security events take it."""

from typing import Annotated

from fastapi import Depends, Request

from backend.deps import get_settings
from backend.middleware.request_context import request_id
from core.observability.audit import Audit


def audit_of(request: Request) -> Audit:
    return Audit(
        retention_days=get_settings(request).retention.security_events_days,
        request_id=request_id(request),
        address=request.client.host if request.client else None,
        user_agent=request.headers.get("user-agent"),
    )


AuditDep = Annotated[Audit, Depends(audit_of)]

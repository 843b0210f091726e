"""The API's side of the agent-run audit (agents/runs/audit.py): an Audit per request, from what the
app's lifespan opened and the request's id."""

from typing import Annotated

from fastapi import Depends, Request

from agents.runs.audit import Audit
from backend.observability import request_id


def get_audit(request: Request) -> Audit:
    state = request.app.state
    return Audit(
        request_id=request_id(request),
        pool=state.pool,
        settings=state.settings,
        queue=state.queue,
        tracing=getattr(state, "tracing", None),
        sampler=state.sampler,
    )


AuditDep = Annotated[Audit, Depends(get_audit)]

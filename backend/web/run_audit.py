"""The API's side of the agent-run audit (agents/runs/audit.py): an Audit per request, from the app's
runtime and the request's id."""

from typing import Annotated

from fastapi import Depends, Request

from agents.runs.audit import Audit
from backend.deps import ApiResourcesDep, RuntimeDep
from backend.middleware.request_context import request_id


def get_audit(request: Request, runtime: RuntimeDep, resources: ApiResourcesDep) -> Audit:
    return Audit(
        request_id=request_id(request),
        pool=runtime.pool,
        settings=runtime.settings,
        queue=runtime.redis,
        tracing=runtime.tracing,
        sampler=resources.sampler,
    )


RunAuditDep = Annotated[Audit, Depends(get_audit)]

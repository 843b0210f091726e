"""The API's side of the agent-run service (agents/runs): one runner per request, for the member the
route's access check found, with the request's agent context, admission queue and audit."""

from typing import Annotated

from fastapi import Depends

from agents.runs.service import AgentRunner
from backend.deps import AgentContextDep, ProjectDep, RuntimeDep
from backend.middleware.model_errors import AdmissionDep
from backend.web.run_audit import RunAuditDep


def get_runner(
    access: ProjectDep, ctx: AgentContextDep, admission: AdmissionDep, audit: RunAuditDep, runtime: RuntimeDep
) -> AgentRunner:
    return AgentRunner(caller=access, context=ctx, admission=admission, audit=audit, pool=runtime.models)


RunnerDep = Annotated[AgentRunner, Depends(get_runner)]

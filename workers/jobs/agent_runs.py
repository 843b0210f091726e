"""The agent runner of a worker job: the job's project and user, the runtime's model and retriever."""

from uuid import UUID

from langchain_core.language_models import BaseChatModel

from agents.common.context import AgentContext
from agents.runs.audit import JobCaller
from agents.runs.service import AgentRunner
from core.runtime import Runtime


async def background_runner(
    runtime: Runtime, llm: BaseChatModel, *, project_id: UUID, user_id: UUID, language: str = "auto"
) -> AgentRunner:
    """A background run: each model call waits its turn, behind the API's interactive requests. No
    audit: the job's own result tells how it went."""
    context = AgentContext(
        project_id=project_id,
        user_id=user_id,
        retriever=runtime.retriever,
        llm=llm,
        structured_mode=runtime.chat.structured_mode,
        language=language,
        thresholds=runtime.thresholds,
        confidence=await runtime.calibrations.current(),
    )
    return AgentRunner(
        caller=JobCaller.of(project_id, user_id),
        context=context,
        admission=runtime.admission,
        priority="background",
        pool=runtime.models,
    )

"""Question Generator items for the API: generated from the project's material (or one document and
section of it), stored as pending items, audited."""

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from agents.question_generator.graph import graph as generator
from agents.question_generator.state import QUESTION_TYPES, QuestionType
from agents.runs.errors import Conflict, NotFound, Unprocessable
from agents.runs.service import AgentRunner
from agents.runs.specs import GENERATOR
from core.messages import Text
from core.retrieval import ProfileError
from core.store.content import documents
from core.store.runs.history import RunRecord


async def generate(
    runner: AgentRunner,
    pool: AsyncConnectionPool,
    *,
    n: int,
    document_id: UUID | None,
    section: Sequence[str],
    types: Sequence[QuestionType] | None,
) -> dict[str, Any]:
    """The generator's result: `saved` rows (near-duplicates of the bank's items are `rejected`).
    Conflict when there is no indexed material to generate from."""
    topic = " ".join(section) or None
    if document_id is not None:
        async with pool.connection() as conn:
            document = await documents.get_document(
                conn, project_id=runner.caller.id, user_id=runner.caller.user.id, document_id=document_id
            )
        if document is None:
            raise NotFound(Text("document.not_found"))
        topic = topic or document.title
    inputs = {
        "n": n,
        "document_id": document_id,
        "section": tuple(section),
        "types": tuple(types or QUESTION_TYPES),
        "topic": topic,
    }
    try:
        result = await runner.invoke(GENERATOR, generator, inputs, question=topic or "")
    except ProfileError as error:
        raise Unprocessable(Text("retrieval.profile_refused", reason=str(error))) from error
    await _record(runner, result, topic)
    if result.get("reason") == "no_sources":
        raise Conflict(Text("question.no_material"))
    return result


async def _record(runner: AgentRunner, result: dict[str, Any], topic: str | None) -> None:
    sources = list(dict.fromkeys(i for row in result["saved"] for i in row.source_chunk_ids))
    run = RunRecord(
        GENERATOR.name,
        topic or "",
        answer="\n".join(row.question for row in result["saved"]),
        outcome=result.get("reason") or "generated",
        retrieved_chunk_ids=sources,
        cited_chunk_ids=sources,
    )
    await runner.record(
        run,
        saved=len(result["saved"]),
        rejected=len(result["rejected"]),
    )

"""RAG QA: a question answered from the project's material with citations, in a thread whose
history rewrites follow-ups; optionally streamed as server-sent events."""

import json
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

from fastapi import APIRouter, HTTPException, status
from fastapi.responses import StreamingResponse
from psycopg import AsyncConnection

from agents.common.context import AgentContext
from agents.qa import DEFAULT_CONFIG, graph
from agents.qa.state import QAInput
from agents.qa.threads import history_from_messages, turn_messages
from backend.audit import Audit, AuditDep
from backend.deps import AgentContextDep, ConnDep, ProjectAccess, ProjectDep
from backend.observability import log_failure
from backend.qa_schemas import QARequest, QAResponse, ThreadDetail, ThreadOut, thread_message, to_response
from core.store import documents, threads
from core.structured import StructuredOutputError

router = APIRouter(prefix="/projects/{project_id}", tags=["qa"])


def _thread_not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "Thread not found.")


async def _open_thread(conn: AsyncConnection, access: ProjectAccess, body: QARequest) -> tuple[UUID, QAInput]:
    """The thread (an existing one of the caller's, or a new one) and the graph's input."""
    scope = {"project_id": access.id, "user_id": access.user.id}
    history: list[Any] = []
    if body.thread_id is None:
        thread_id = (await threads.create_thread(conn, **scope, title=body.question[:80]))["id"]
    else:
        if await threads.get_thread(conn, **scope, thread_id=body.thread_id) is None:
            raise _thread_not_found()
        thread_id = body.thread_id
        messages = await threads.recent_messages(
            conn, **scope, thread_id=thread_id, limit=2 * DEFAULT_CONFIG.history_turns
        )
        history = history_from_messages(messages)
    docs = await documents.list_documents(conn, **scope)
    refs = [{"id": str(d["id"]), "title": d["title"], "filename": d["filename"]} for d in docs]
    return thread_id, {
        "question": body.question,
        "history": history,
        "documents": refs,
        "stream": body.stream,
    }


async def _record(
    conn: AsyncConnection,
    access: ProjectAccess,
    ctx: AgentContext,
    body: QARequest,
    result: dict[str, Any],
    thread_id: UUID,
    audit: Audit,
) -> QAResponse:
    """Stores the turn and its history row (a sampled answer is queued for judging), logs one JSON
    line for the request and builds the response."""
    await threads.add_messages(
        conn,
        project_id=access.id,
        user_id=access.user.id,
        thread_id=thread_id,
        messages=turn_messages(body.question, result),
    )
    ctx.timings_ms["total"] = audit.elapsed_ms()
    await audit.record(
        conn,
        access,
        agent="qa",
        question=body.question,
        answer=result.get("answer"),
        outcome=result.get("outcome"),
        retrieved=[c.chunk_id for c in result.get("retrieved", [])],
        cited=[c.chunk_id for c in result.get("citations", [])],
        timings_ms=ctx.timings_ms,
        tokens=ctx.usage.by_model,
        # Only answers are judged: "not found", declines and clarifications claim nothing to check.
        judge=result.get("outcome") == "answered",
        thread_id=str(thread_id),
        stream=body.stream,
    )
    return to_response(
        result,
        thread_id=thread_id,
        request_id=audit.request_id,
        timings_ms=ctx.timings_ms,
        tokens=ctx.usage.by_model,
        debug=body.debug,
    )


@router.post("/qa", response_model=QAResponse, responses={200: {"content": {"text/event-stream": {}}}})
async def ask(
    body: QARequest, access: ProjectDep, ctx: AgentContextDep, conn: ConnDep, audit: AuditDep
) -> QAResponse | StreamingResponse:
    """Answers from this project's material only. With `stream: true` the reply is
    `text/event-stream`: `token` events ({"text"}), then `citations` ([...]), then `done` (the
    same object as the JSON reply); `error` ({"detail"}) if the model fails mid-way."""
    thread_id, inputs = await _open_thread(conn, access, body)
    if body.stream:
        events = _stream(conn, access, ctx, body, inputs, thread_id, audit)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    try:
        result = await graph.ainvoke(inputs, config=audit.run_config(), context=ctx)
    except StructuredOutputError as error:
        await audit.record_failure(conn, access, error, agent="qa", question=body.question, ctx=ctx)
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, f"The chat model's reply was unusable: {error}"
        ) from error
    return await _record(conn, access, ctx, body, result, thread_id, audit)


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _stream(
    conn: AsyncConnection,
    access: ProjectAccess,
    ctx: AgentContext,
    body: QARequest,
    inputs: QAInput,
    thread_id: UUID,
    audit: Audit,
) -> AsyncIterator[str]:
    result: dict[str, Any] = {}
    sent_tokens = False
    try:
        async for mode, payload in graph.astream(
            inputs, config=audit.run_config(), context=ctx, stream_mode=["custom", "values"]
        ):
            if mode == "custom":
                sent_tokens = True
                yield _event("token", {"text": payload["token"]})
            else:
                result = payload
    except Exception as error:  # the response has started: the client can only be told in the stream
        log_failure(audit.request_id, error, route="qa_stream")
        await audit.record_failure(conn, access, error, agent="qa", question=body.question, ctx=ctx)
        yield _event("error", {"detail": f"The answer failed: {type(error).__name__}"})
        return
    if not sent_tokens:  # a clarification or a gate's "not found": the whole text as one token
        yield _event("token", {"text": result.get("answer", "")})
    response = await _record(conn, access, ctx, body, result, thread_id, audit)
    yield _event("citations", [c.model_dump(mode="json") for c in response.citations])
    yield _event("done", response.model_dump(mode="json"))


@router.get("/qa/threads")
async def list_threads(access: ProjectDep, conn: ConnDep) -> list[ThreadOut]:
    """The caller's own QA threads in this project, most recent first."""
    rows = await threads.list_threads(conn, project_id=access.id, user_id=access.user.id)
    return [ThreadOut(**row) for row in rows]


@router.get("/qa/threads/{thread_id}")
async def get_thread(thread_id: UUID, access: ProjectDep, conn: ConnDep) -> ThreadDetail:
    scope = {"project_id": access.id, "user_id": access.user.id, "thread_id": thread_id}
    row = await threads.get_thread(conn, **scope)
    if row is None:
        raise _thread_not_found()
    messages = await threads.recent_messages(conn, **scope)
    return ThreadDetail(**row, messages=[thread_message(m) for m in messages])

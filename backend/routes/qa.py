"""RAG QA: a question answered from the project's material with citations, in a thread whose
history rewrites follow-ups; optionally streamed as server-sent events.

Connections are borrowed around the SQL only: one to open the thread, none while the graph runs or
streams (its retriever borrows its own), one at the end to store the turn."""

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

import openai
import psycopg
from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from psycopg_pool import AsyncConnectionPool

from agents.common.citations import citation_for
from agents.common.context import AgentContext
from agents.qa import DEFAULT_CONFIG
from agents.qa.state import QAInput
from agents.qa.study_next import asks_what_to_study, study_next_reply
from agents.qa.threads import history_from_messages, turn_messages
from backend.admission import (
    KEEPALIVE,
    MODEL_DOWN_RETRY_AFTER_S,
    AdmissionDep,
    model_error_detail,
    queued_events,
    with_keepalive,
)
from backend.audit import Audit, AuditDep
from backend.clock import ClockDep
from backend.deps import AgentContextDep, DbDep, ProjectAccess, ProjectDep, SettingsDep
from backend.observability import log_failure
from backend.qa_schemas import QARequest, QAResponse, ThreadDetail, ThreadOut, thread_message, to_response
from core.admission import Ticket
from core.retrieval import Candidate
from core.store import documents, privacy, questions, threads
from core.structured import StructuredOutputError
from core.study import service as study

router = APIRouter(prefix="/projects/{project_id}", tags=["qa"])


def _thread_not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "Thread not found.")


async def _open_thread(
    db: AsyncConnectionPool,
    access: ProjectAccess,
    body: QARequest,
    *,
    keep_threads: bool,
    for_graph: bool = True,
) -> tuple[UUID | None, QAInput]:
    """The thread (an existing one of the caller's, or a new one; None when threads are not kept:
    QA_THREAD_RETENTION_DAYS=0) and the graph's input (the project's documents only `for_graph`)."""
    scope = {"project_id": access.id, "user_id": access.user.id}
    history: list[Any] = []
    thread_id: UUID | None = None
    if not keep_threads and body.thread_id is not None:
        raise HTTPException(
            422,
            "Conversations are not kept on this server (QA_THREAD_RETENTION_DAYS=0): ask without thread_id.",
        )
    async with db.connection() as conn:
        if keep_threads and body.thread_id is None:
            thread_id = (await threads.create_thread(conn, **scope, title=body.question[:80]))["id"]
        elif body.thread_id is not None:
            if await threads.get_thread(conn, **scope, thread_id=body.thread_id) is None:
                raise _thread_not_found()
            thread_id = body.thread_id
            messages = await threads.recent_messages(
                conn, **scope, thread_id=thread_id, limit=2 * DEFAULT_CONFIG.history_turns
            )
            history = history_from_messages(messages)
        docs = await documents.list_documents(conn, **scope) if for_graph else []
    refs = [{"id": str(d.id), "title": d.title, "filename": d.filename} for d in docs]
    return thread_id, {
        "question": body.question,
        "history": history,
        "documents": refs,
        "stream": body.stream,
    }


async def _record(
    db: AsyncConnectionPool,
    access: ProjectAccess,
    ctx: AgentContext,
    body: QARequest,
    result: dict[str, Any],
    thread_id: UUID | None,
    audit: Audit,
) -> QAResponse:
    """Stores the turn (unless threads are not kept) and its history row (a sampled answer is queued
    for judging), logs one JSON line for the request and builds the response."""
    if thread_id is not None:
        async with db.connection() as conn:
            await threads.add_messages(
                conn,
                project_id=access.id,
                user_id=access.user.id,
                thread_id=thread_id,
                messages=turn_messages(body.question, result),
            )
    ctx.timings_ms["total"] = audit.elapsed_ms()
    await audit.record(
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
        thread_id=str(thread_id) if thread_id else None,
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
    body: QARequest,
    access: ProjectDep,
    ctx: AgentContextDep,
    db: DbDep,
    audit: AuditDep,
    admission: AdmissionDep,
    settings: SettingsDep,
    clock: ClockDep,
    request: Request,
) -> QAResponse | StreamingResponse:
    """Answers from this project's material only. With `stream: true` the reply is
    `text/event-stream`: `token` events ({"text"}), then `citations` ([...]), then `done` (the
    same object as the JSON reply); `error` ({"detail"}) if the model fails mid-way. A `reset` event
    ({}) means the tokens so far are withdrawn (an answer withheld after it streamed: its words were
    not in the excerpts); the tokens after the last `reset` make the `done` reply's answer. While it waits
    for the chat model, `queued` ({"position"}) events and `: keep-alive` comments. "What should I study
    next?" is answered from the caller's own mastery (outcome `study_plan`), without the model."""
    keep_threads = settings.qa_thread_retention_days > 0
    if language := asks_what_to_study(body.question):
        thread_id, _ = await _open_thread(db, access, body, keep_threads=keep_threads, for_graph=False)
        result = await _study_next(db, access, language, clock())
        response = await _record(db, access, ctx, body, result, thread_id, audit)
        return _replay(response) if body.stream else response
    qa_graph = request.app.state.qa_graph  # built at start-up with the deployment's QAConfig
    # A place in the model's queue first: a full queue is a plain 429, before anything is written.
    ticket = await admission.enqueue(user=str(access.user.id))
    try:
        thread_id, inputs = await _open_thread(db, access, body, keep_threads=keep_threads)
    except BaseException:
        await ticket.release()
        raise
    if body.stream:
        events = _stream(qa_graph, ticket, db, access, ctx, body, inputs, thread_id, audit)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    async with ticket:  # the slot is held for the graph only, freed however it ends
        await ticket.acquired()
        try:
            result = await qa_graph.ainvoke(inputs, config=audit.run_config(), context=ctx)
        except StructuredOutputError as error:
            await audit.record_failure(access, error, agent="qa", question=body.question, ctx=ctx)
            raise HTTPException(
                status.HTTP_502_BAD_GATEWAY, f"The chat model's reply was unusable: {error}"
            ) from error
    return await _record(db, access, ctx, body, result, thread_id, audit)


async def _study_next(
    db: AsyncConnectionPool, access: ProjectAccess, language: str, now: datetime
) -> dict[str, Any]:
    """The reply to "what should I study next?": the caller's weakest topics, cited by the passages
    their next items come from (agents/qa/study_next.py)."""
    scope = {"project_id": access.id, "user_id": access.user.id}
    async with db.connection() as conn:
        topics = await study.student_mastery(conn, **scope, now=now) or []
        reply = study_next_reply(topics, language)
        rows = await questions.source_chunks(conn, **scope, chunk_ids=reply.chunk_ids)
    return {
        "answer": reply.answer,
        "has_answer": reply.has_answer,
        "outcome": "study_plan" if reply.has_answer else "not_found",
        "citations": [citation_for(Candidate(chunk_id=row["id"], row=row)) for row in rows],
        "language": language,
    }


def _replay(response: QAResponse) -> StreamingResponse:
    """A reply already complete, in the stream's events."""
    events = [_event("token", {"text": response.answer}), *_closing_events(response)]
    headers = {"Cache-Control": "no-cache"}
    return StreamingResponse(iter(events), media_type="text/event-stream", headers=headers)


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _closing_events(response: QAResponse) -> list[str]:
    return [
        _event("citations", [c.model_dump(mode="json") for c in response.citations]),
        _event("done", response.model_dump(mode="json")),
    ]


async def _stream(
    qa_graph: Any,
    ticket: Ticket,
    db: AsyncConnectionPool,
    access: ProjectAccess,
    ctx: AgentContext,
    body: QARequest,
    inputs: QAInput,
    thread_id: UUID | None,
    audit: Audit,
) -> AsyncIterator[str]:
    result: dict[str, Any] = {}
    sent_tokens = False
    # The slot is freed when the answer is done or fails, and when the client goes away (the
    # generator is cancelled, and with it the model call).
    async with ticket:
        try:
            async for waiting in queued_events(ticket):
                yield waiting
            steps = qa_graph.astream(
                inputs, config=audit.run_config(), context=ctx, stream_mode=["custom", "values"]
            )
            async for step in with_keepalive(steps):
                if step is None:  # the model is slow to start: keep proxies from cutting the stream
                    yield KEEPALIVE
                    continue
                mode, payload = step
                if mode == "custom" and payload.get("reset"):
                    yield _event("reset", {})
                elif mode == "custom":
                    sent_tokens = True
                    yield _event("token", {"text": payload["token"]})
                else:
                    result = payload
        except Exception as error:  # the response has started: the client can only be told in the stream
            log_failure(audit.request_id, error, route="qa_stream")
            yield _event("error", _stream_failure(error))
            await _record_failure_quietly(audit, access, error, body, ctx)
            return
    if not sent_tokens:  # a clarification or a gate's "not found": the whole text as one token
        yield _event("token", {"text": result.get("answer", "")})
    try:
        response = await _record(db, access, ctx, body, result, thread_id, audit)
    except Exception as error:  # the answer streamed, but it could not be stored: say so, never cut
        log_failure(audit.request_id, error, route="qa_stream")
        reason = "the database is unavailable" if isinstance(error, psycopg.OperationalError) else "an error"
        yield _event("error", {"detail": f"The answer could not be saved: {reason}."})
        return
    for event in _closing_events(response):
        yield event


async def _record_failure_quietly(
    audit: Audit, access: ProjectAccess, error: Exception, body: QARequest, ctx: AgentContext
) -> None:
    """The failure's history row, when the database can take it: a stream that already told its
    client about the failure must end cleanly, not be cut by a second one."""
    try:
        await audit.record_failure(access, error, agent="qa", question=body.question, ctx=ctx)
    except Exception as second:
        log_failure(audit.request_id, second, route="qa_stream_record")


def _stream_failure(error: Exception) -> dict[str, Any]:
    if isinstance(error, openai.APIConnectionError):  # the model server is down: say so, and when to retry
        return {"detail": model_error_detail(error), "retry_after": MODEL_DOWN_RETRY_AFTER_S}
    return {"detail": f"The answer failed: {type(error).__name__}"}


@router.get("/qa/threads")
async def list_threads(
    access: ProjectDep,
    db: DbDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[ThreadOut]:
    """The caller's own QA threads in this project, most recent first, a page at a time."""
    async with db.connection() as conn:
        rows = await threads.list_threads(
            conn, project_id=access.id, user_id=access.user.id, limit=limit, offset=offset
        )
    return [ThreadOut(**row) for row in rows]


@router.get("/qa/threads/{thread_id}")
async def get_thread(thread_id: UUID, access: ProjectDep, db: DbDep) -> ThreadDetail:
    scope = {"project_id": access.id, "user_id": access.user.id, "thread_id": thread_id}
    async with db.connection() as conn:
        row = await threads.get_thread(conn, **scope)
        if row is None:
            raise _thread_not_found()
        messages = await threads.recent_messages(conn, **scope)
    return ThreadDetail(**row, messages=[thread_message(m) for m in messages])


@router.delete("/qa/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_thread(thread_id: UUID, access: ProjectDep, db: DbDep) -> Response:
    """Deletes the caller's own thread and all its messages; anyone else's reads as missing (404)."""
    async with db.connection() as conn:
        deleted = await privacy.delete_own_thread(
            conn, project_id=access.id, user_id=access.user.id, thread_id=thread_id
        )
    if not deleted:
        raise _thread_not_found()
    return Response(status_code=status.HTTP_204_NO_CONTENT)

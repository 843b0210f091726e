"""RAG QA: a question answered from the project's material with citations, in a thread whose
history rewrites follow-ups; optionally streamed as server-sent events. The turn itself: agents/runs/qa.py."""

from dataclasses import asdict
from functools import partial
from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, Response, status
from fastapi.responses import StreamingResponse

from agents.qa.study_next import asks_what_to_study
from agents.runs.qa import Ask, QAService, QATurn
from backend.deps import ApiResourcesDep, DbDep, ProjectDep, SettingsDep
from backend.qa.schemas import QARequest, QAResponse, ThreadDetail, ThreadOut, thread_message, to_response
from backend.qa.streaming import event_stream, qa_events, replay
from backend.web.agent_runs import RunnerDep
from backend.web.clock import ClockDep
from backend.web.language import request_language
from backend.web.paging import PageDep
from core.store.accounts import privacy
from core.store.runs import threads

router = APIRouter(prefix="/projects/{project_id}", tags=["qa"])


def _thread_not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "Thread not found.")


def _response(turn: QATurn, *, debug: bool) -> QAResponse:
    return to_response(
        turn.result,
        thread_id=turn.thread_id,
        request_id=turn.request_id,
        timings_ms=turn.timings_ms,
        tokens=turn.tokens,
        debug=debug,
    )


@router.post("/qa", response_model=QAResponse, responses={200: {"content": {"text/event-stream": {}}}})
async def ask(
    body: QARequest,
    request: Request,
    runner: RunnerDep,
    db: DbDep,
    settings: SettingsDep,
    clock: ClockDep,
    resources: ApiResourcesDep,
) -> QAResponse | StreamingResponse:
    """Answers from this project's material only. With `stream: true` the reply is
    `text/event-stream`: `evidence` ([passages], the best passages with their key sentence, before the
    model writes), `token` events ({"text"}), then `citations` ([...]), then `done` (the same object as
    the JSON reply, with the answer's `confidence`); `error` ({"detail"}) if the model fails mid-way.
    A `reset` event ({}) means the tokens so far are withdrawn (an answer withheld after it streamed:
    its words were not in the excerpts, or its confidence is low); the tokens after the last `reset`
    make the `done` reply's answer. While it waits for the chat model, `queued` ({"position"}) events
    and `: keep-alive` comments. "What should I study next?" is answered from the caller's own mastery
    (outcome `study_plan`), without the model."""
    qa_graph = resources.qa_graph  # built at start-up with the deployment's QAConfig
    qa = QAService(runner, db, qa_graph, keep_threads=settings.retention.qa_thread_days > 0)
    asked = Ask(body.question, body.thread_id, body.stream)
    respond = partial(_response, debug=body.debug)
    if language := asks_what_to_study(body.question):
        response = respond(await qa.study_next(asked, language, clock()))
        return replay(response) if body.stream else response
    if body.stream:
        return event_stream(qa_events(await qa.stream(asked), respond, request_language(request)))
    return respond(await qa.answer(asked))


@router.get("/qa/threads")
async def list_threads(access: ProjectDep, db: DbDep, page: PageDep) -> list[ThreadOut]:
    """The caller's own QA threads in this project, most recent first, a page at a time."""
    async with db.connection() as conn:
        rows = await threads.list_threads(conn, **access.scope, page=page)
    return [ThreadOut.model_validate(row) for row in rows]


@router.get("/qa/threads/{thread_id}")
async def get_thread(thread_id: UUID, access: ProjectDep, db: DbDep) -> ThreadDetail:
    async with db.connection() as conn:
        row = await threads.get_thread(conn, **access.scope, thread_id=thread_id)
        if row is None:
            raise _thread_not_found()
        messages = await threads.recent_messages(conn, **access.scope, thread_id=thread_id)
    return ThreadDetail(**asdict(row), messages=[thread_message(m) for m in messages])


@router.delete("/qa/threads/{thread_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_thread(thread_id: UUID, access: ProjectDep, db: DbDep) -> Response:
    """Deletes the caller's own thread and all its messages; anyone else's reads as missing (404)."""
    async with db.connection() as conn:
        deleted = await privacy.delete_own_thread(conn, **access.scope, thread_id=thread_id)
    if not deleted:
        raise _thread_not_found()
    return Response(status_code=status.HTTP_204_NO_CONTENT)

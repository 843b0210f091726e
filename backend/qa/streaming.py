"""Server-sent events: an agent run's steps (agents/runs) as the `text/event-stream` a client reads.

QA's events: `evidence` ([passages]) as soon as retrieval has them, `queued` ({"position"}) and
`: keep-alive` comments while it waits for the model (`queued` {"position": 0} once its turn comes),
`token` ({"text"}), `reset` ({}), then `citations` ([...]) and `done` (the JSON reply); `error`
({"detail"}, with `code` and `message` where it has them) instead when it fails once the response has
started."""

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from contextlib import aclosing
from typing import Any

import openai
import psycopg
from fastapi.responses import StreamingResponse

from agents.runs.qa import Answered, QAStep, QATurn
from agents.runs.service import MODEL_DOWN_RETRY_AFTER_S
from agents.runs.steps import Evidence, Failed, KeepAlive, Queued, Reset, Token
from backend.middleware.model_errors import model_error_detail
from backend.qa.schemas import QAResponse
from backend.web.language import said

KEEPALIVE = ": keep-alive\n\n"


def sse_event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def event_stream(events: AsyncIterator[str] | Iterable[str], *, live: bool = True) -> StreamingResponse:
    """A `live` stream also asks proxies not to buffer it (its events come as the model writes)."""
    headers = {"Cache-Control": "no-cache", **({"X-Accel-Buffering": "no"} if live else {})}
    return StreamingResponse(events, media_type="text/event-stream", headers=headers)


def replay(response: QAResponse) -> StreamingResponse:
    """A reply already complete, in the stream's events."""
    events = [sse_event("token", {"text": response.answer}), *_closing_events(response)]
    return event_stream(iter(events), live=False)


async def qa_events(
    steps: AsyncGenerator[QAStep, None], respond: Callable[[QATurn], QAResponse], language: str = "en"
) -> AsyncIterator[str]:
    """`language`: the person's, for an `error` event's `message` (backend/web/language.py)."""
    async with aclosing(steps):
        async for step in steps:
            match step:
                case Queued(position=position):
                    yield sse_event("queued", {"position": position})
                case KeepAlive():
                    yield KEEPALIVE
                case Evidence(passages=passages):
                    yield sse_event("evidence", passages)
                case Token(text=text):
                    yield sse_event("token", {"text": text})
                case Reset():
                    yield sse_event("reset", {})
                case Failed():
                    yield sse_event("error", _failure(step, language))
                case Answered(turn=turn):
                    for event in _closing_events(respond(turn)):
                        yield event


def _closing_events(response: QAResponse) -> list[str]:
    return [
        sse_event("citations", [c.model_dump(mode="json") for c in response.citations]),
        sse_event("done", response.model_dump(mode="json")),
    ]


def _failure(failed: Failed, language: str) -> dict[str, Any]:
    error = failed.error
    if failed.saving:
        reason = "the database is unavailable" if isinstance(error, psycopg.OperationalError) else "an error"
        return {"detail": f"The answer could not be saved: {reason}."}
    if isinstance(error, openai.APIConnectionError):  # the model server is down: say so, and when to retry
        return {**said(model_error_detail(error), language), "retry_after": MODEL_DOWN_RETRY_AFTER_S}
    return {"detail": f"The answer failed: {type(error).__name__}"}

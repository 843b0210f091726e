"""The API's side of the chat model's admission queue (core/admission.py): the dependency routes take
a ticket from, the answers for a full queue (429) and an unreachable model (503), both with
Retry-After, and the server-sent events a waiting stream gets."""

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, TypeVar

import httpx
import openai
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from backend.deps import RuntimeDep
from backend.observability import log_json, request_id
from core.admission import AdmissionRejected, LlmAdmission, Ticket

T = TypeVar("T")

# Seconds between keep-alive comments of a stream that waits (for a slot, or for the first token):
# below the 15 s at which some proxies give up on a silent connection, with room to spare.
KEEPALIVE_S = 10.0
KEEPALIVE = ": keep-alive\n\n"
# A model server that is down is usually back (restarted by `studyai up`) within seconds.
MODEL_DOWN_RETRY_AFTER_S = 10
QUEUE_DOWN_RETRY_AFTER_S = 5


def get_admission(runtime: RuntimeDep) -> LlmAdmission:
    return runtime.admission


AdmissionDep = Annotated[LlmAdmission, Depends(get_admission)]


def sse_event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def queued_events(ticket: Ticket, *, tick_s: float = KEEPALIVE_S) -> AsyncIterator[str]:
    """While the ticket waits: `event: queued` with `{"position": n}` whenever the position changes
    (first at once), and a keep-alive comment every `tick_s` it stays the same. Ends once granted."""
    sent: int | None = None
    async for position in ticket.wait(tick_s=tick_s):
        yield sse_event("queued", {"position": position}) if position != sent else KEEPALIVE
        sent = position


async def with_keepalive(source: AsyncIterator[T], interval: float = KEEPALIVE_S) -> AsyncIterator[T | None]:
    """The items of `source`, and None whenever none came for `interval` seconds (a slow model's
    first token), so a stream can send a keep-alive. The source runs in a task of its own; cancelling
    this iterator (a client that went away) cancels it, and with it the model call."""
    queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        try:
            async for item in source:
                await queue.put((False, item))
        except Exception as error:  # handed to the consumer, raised there
            await queue.put((True, error))
            return
        await queue.put((True, None))

    task = asyncio.ensure_future(pump())
    try:
        while True:
            try:
                finished, item = await asyncio.wait_for(queue.get(), interval)
            except TimeoutError:
                yield None
                continue
            if finished:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task


def model_error_detail(error: BaseException) -> str:
    """What a client is told when the chat model cannot be used (never the error's own text)."""
    if isinstance(error, openai.APITimeoutError | httpx.TimeoutException):
        return "The chat model did not answer in time; try again shortly."
    return "The chat model is unreachable (its server is down or restarting); try again shortly."


def _answer(
    request: Request, status: int, detail: str, retry_after: int, event: str, error: Exception
) -> JSONResponse:
    rid = request_id(request)
    log_json(logging.WARNING, event, request_id=rid, error_type=type(error).__name__, path=request.url.path)
    return JSONResponse(
        {"detail": detail, "request_id": rid}, status_code=status, headers={"Retry-After": str(retry_after)}
    )


async def queue_full(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, AdmissionRejected)
    return _answer(request, 429, str(error), error.retry_after, "llm_queue_full", error)


async def model_unreachable(request: Request, error: Exception) -> JSONResponse:
    return _answer(
        request, 503, model_error_detail(error), MODEL_DOWN_RETRY_AFTER_S, "llm_unreachable", error
    )


async def queue_unreachable(request: Request, error: Exception) -> JSONResponse:
    detail = "The request queue (Redis) is unavailable; try again shortly."
    return _answer(request, 503, detail, QUEUE_DOWN_RETRY_AFTER_S, "queue_unavailable", error)


def add_model_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AdmissionRejected, queue_full)
    # APITimeoutError is an APIConnectionError; httpx's own errors reach here from direct clients.
    for error in (openai.APIConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
        app.add_exception_handler(error, model_unreachable)
    for error in (RedisConnectionError, RedisTimeoutError):
        app.add_exception_handler(error, queue_unreachable)

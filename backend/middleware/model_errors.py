"""The API's side of the chat model's admission queue (core/llm/admission.py): the dependency routes take
a ticket from, the answers for a full queue (429) and an unreachable model (503), both with
Retry-After. A waiting stream's events: backend/qa/streaming.py."""

from typing import Annotated

import httpx
import openai
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agents.runs.service import MODEL_DOWN_RETRY_AFTER_S
from backend.deps import RuntimeDep
from backend.middleware.request_context import log_handled_error
from backend.web.language import request_language, said
from core.llm.admission import AdmissionRejected, LlmAdmission
from core.messages import Text

QUEUE_DOWN_RETRY_AFTER_S = 5


def get_admission(runtime: RuntimeDep) -> LlmAdmission:
    return runtime.admission


AdmissionDep = Annotated[LlmAdmission, Depends(get_admission)]


def model_error_detail(error: BaseException) -> Text:
    """What a client is told when the chat model cannot be used (never the error's own text)."""
    if isinstance(error, openai.APITimeoutError | httpx.TimeoutException):
        return Text("qa.model_timeout")
    return Text("qa.model_unreachable")


def _answer(
    request: Request, status: int, detail: Text, retry_after: int, event: str, error: Exception
) -> JSONResponse:
    rid = log_handled_error(request, event, error)
    return JSONResponse(
        {**said(detail, request_language(request)), "request_id": rid},
        status_code=status,
        headers={"Retry-After": str(retry_after)},
    )


async def queue_full(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, AdmissionRejected)
    detail = Text("qa.queue_full", waiting=error.waiting, retry_after=error.retry_after)
    return _answer(request, 429, detail, error.retry_after, "llm_queue_full", error)


async def model_unreachable(request: Request, error: Exception) -> JSONResponse:
    return _answer(
        request, 503, model_error_detail(error), MODEL_DOWN_RETRY_AFTER_S, "llm_unreachable", error
    )


async def queue_unreachable(request: Request, error: Exception) -> JSONResponse:
    detail = Text("qa.queue_unreachable")
    return _answer(request, 503, detail, QUEUE_DOWN_RETRY_AFTER_S, "queue_unavailable", error)


def add_model_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(AdmissionRejected, queue_full)
    # APITimeoutError is an APIConnectionError; httpx's own errors reach here from direct clients.
    for error in (openai.APIConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
        app.add_exception_handler(error, model_unreachable)
    for error in (RedisConnectionError, RedisTimeoutError):
        app.add_exception_handler(error, queue_unreachable)

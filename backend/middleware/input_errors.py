"""Hostile input that gets past the request schemas answers 422 with a JSON `detail`, never a 500.

The fuzz run (benchmarks/faults/fuzz.py) found three ways a request's own bytes crashed
the app:

- an error that echoes what was sent (FastAPI's 422 lists each bad `input`; some routes put a
  validation error's list in an HTTPException) failed to render when the input held a lone surrogate
  (`"\\ud800"` is valid JSON, not encodable UTF-8), bytes, or NaN: error bodies are rendered as ASCII
  JSON here, with whatever JSON cannot hold made into text;
- text with a lone surrogate reached psycopg or the chat model's client, which cannot encode it
  (UnicodeEncodeError);
- a value Postgres refuses (psycopg.DataError): a NUL character in text, an offset beyond bigint, and
  the like.

The last two are the request's fault wherever they surface, so they answer 422; the log line names
the error type and the path (never the message, which can quote the value), so a bug that raises them
on the server's own data is still visible."""

import json
import math
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.utils import is_body_allowed_for_status_code
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response

from backend.middleware.request_context import log_handled_error
from backend.web.language import refusal_body
from core.messages import Text


class SafeJSONResponse(JSONResponse):
    """ASCII JSON: a lone surrogate or a control character echoed back is escaped, not an encoding error."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def json_safe(value: Any) -> Any:
    """`value` with what JSON cannot hold made into text: bytes decoded with replacement, NaN and
    infinities as strings, anything else through FastAPI's encoder."""
    if isinstance(value, dict):
        return {str(json_safe(k)): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json_safe(jsonable_encoder(value))


async def validation_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestValidationError)
    return SafeJSONResponse({"detail": json_safe(error.errors())}, status_code=422)


async def http_error(request: Request, error: Exception) -> Response:
    """FastAPI's own handler, with the detail made JSON-safe (it may be a list of validation errors)."""
    assert isinstance(error, StarletteHTTPException)
    headers = getattr(error, "headers", None)
    if not is_body_allowed_for_status_code(error.status_code):
        return Response(status_code=error.status_code, headers=headers)
    if isinstance(error.detail, Text):  # a sentence with a code: said in the person's language too
        return SafeJSONResponse(refusal_body(request, error), status_code=error.status_code, headers=headers)
    return SafeJSONResponse(
        {"detail": json_safe(error.detail)}, status_code=error.status_code, headers=headers
    )


def _unprocessable(request: Request, error: Exception, detail: str) -> Response:
    rid = log_handled_error(request, "invalid_input", error)
    return SafeJSONResponse({"detail": detail, "request_id": rid}, status_code=422)


async def unencodable_text(request: Request, error: Exception) -> Response:
    return _unprocessable(
        request,
        error,
        "The request holds text that is not valid Unicode (a lone surrogate): send UTF-8 text.",
    )


async def unstorable_value(request: Request, error: Exception) -> Response:
    return _unprocessable(
        request,
        error,
        f"A value in the request cannot be stored or compared ({type(error).__name__}): for example a NUL"
        " character in text or a number out of range.",
    )


def add_input_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(UnicodeEncodeError, unencodable_text)
    app.add_exception_handler(psycopg.DataError, unstorable_value)

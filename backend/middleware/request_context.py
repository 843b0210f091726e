"""Request ids, one access log line per request, and the 500 answer for unhandled errors.

A plain ASGI middleware rather than Starlette's BaseHTTPMiddleware: that one buffers streamed
bodies through a task group, and the QA route streams server-sent events."""

import json
import logging
import re
import uuid
from typing import Any

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.observability import timing
from core.observability.jsonlog import log_failure, log_json

HEADER = "X-Request-ID"
# An incoming id is kept when it looks like an id (a uuid, a hex string, a tracing id), so a proxy's or
# a client's id ties their logs to ours; anything else (too long, spaces, control characters that could
# forge log lines or headers) is replaced by a fresh one.
_SANE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def request_id_for(incoming: str | None) -> str:
    if incoming and _SANE_ID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


def request_id(request: Request) -> str:
    """The id the middleware gave this request (a fresh one when the app runs without it)."""
    state = request.scope.setdefault("state", {})
    return state.setdefault("request_id", uuid.uuid4().hex)


def log_handled_error(request: Request, event: str, error: BaseException, **fields: Any) -> str:
    """The WARNING line of an error a handler answers: its type, never its message (which can quote
    the request's values or SQL parameters), and the path. Returns the request's id for the answer."""
    rid = request_id(request)
    error_type = type(error).__name__
    log_json(
        logging.WARNING,
        event,
        request_id=rid,
        error_type=error_type,
        path=loggable_path(request.url.path),
        **fields,
    )
    return rid


def log_warning(request: Request, event: str, **fields: Any) -> None:
    """A WARNING line about a request (a refused sign-in, a refused launch), with its id."""
    log_json(logging.WARNING, event, request_id=request_id(request), **fields)


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        rid = request_id_for(headers.get(HEADER.lower()))
        scope.setdefault("state", {})["request_id"] = rid
        started = timing.mark()
        status_code = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status_code, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status_code = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (HEADER.encode(), rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as error:
            log_failure(rid, error, method=scope["method"], path=loggable_path(scope["path"]))
            if response_started:  # a streamed body broke off: the client sees the connection end
                raise
            await _internal_error(send_with_id, rid)
        finally:
            log_json(
                logging.INFO,
                "http",
                request_id=rid,
                method=scope["method"],
                path=loggable_path(scope["path"]),
                status=status_code,
                duration_ms=timing.elapsed_ms(started, 1),
            )


# Paths that carry a one-time secret (an invitation code, a reset or launch ticket): logged without it,
# so the access log hands nobody a way in.
SECRET_PATH_PREFIXES = ("/join/", "/auth/reset/", "/auth/ticket/")


def loggable_path(path: str) -> str:
    for prefix in SECRET_PATH_PREFIXES:
        if path.startswith(prefix) and len(path) > len(prefix):
            return prefix + "[redacted]"
    return path


async def _internal_error(send: Send, rid: str) -> None:
    body = json.dumps({"detail": "Internal server error", "request_id": rid}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 500,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})

"""Database trouble answers 503 with Retry-After, at once, instead of a 500 after a long wait; an agent
run's domain errors (agents/runs/errors.py) answer their one status each.

Two cases reach here: no pooled connection became free within DATABASE_POOL_TIMEOUT_S (every one is
busy, or Postgres is down so none can be opened: the pool cannot tell these apart), and a query that
failed because its connection broke or could not be made (Postgres restarting). Both are temporary,
so the client is told when to try again. These are exception handlers, so the answer is an ordinary
response and passes through the request middleware (request id header, access log line)."""

import psycopg
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout

from agents.runs.errors import (
    AgentRunError,
    Conflict,
    Forbidden,
    ModelUnreachable,
    NotFound,
    Unprocessable,
    UnusableReply,
)
from backend.deps import runtime_of
from backend.middleware.request_context import log_handled_error
from backend.web.language import refusal_body

# Seconds a client should wait before retrying: a busy pool frees up within a request's time; a
# restarting database takes a few seconds to come back.
BUSY_RETRY_AFTER_S = 2
DOWN_RETRY_AFTER_S = 5
DISK_FULL_DETAIL = (
    "The server is out of disk space, so nothing was saved; ask the administrator to free space, then retry."
)


def _unavailable(request: Request, error: Exception, detail: str, retry_after: int) -> JSONResponse:
    # The pool's state tells an operator whether it was full (pool_available 0 at pool_max) or could
    # not connect.
    pool = runtime_of(request.app).pool
    rid = log_handled_error(request, "database_unavailable", error, pool=pool.get_stats())
    # The embedded Postgres stopped (e.g. its disk is full): the client reads why, not only "retry".
    watch = getattr(getattr(request.app.state, "api_resources", None), "postgres_watch", None)
    down_reason = watch.state()[0] if watch is not None else None
    if down_reason is not None:
        detail = f"The database is not running: {down_reason}. Retry later."
    return JSONResponse(
        {"detail": detail, "request_id": rid}, status_code=503, headers={"Retry-After": str(retry_after)}
    )


async def pool_timeout(request: Request, error: Exception) -> JSONResponse:
    detail = (
        "The server is busy: no database connection became free in time (or the database is"
        " unreachable). Retry shortly."
    )
    return _unavailable(request, error, detail, BUSY_RETRY_AFTER_S)


async def database_unavailable(request: Request, error: Exception) -> JSONResponse:
    return _unavailable(
        request, error, "The database is unavailable right now. Retry shortly.", DOWN_RETRY_AFTER_S
    )


async def disk_full(request: Request, error: Exception) -> JSONResponse:
    # Not a blink: the write fails until an administrator frees space, so 507 says whose move it is.
    rid = log_handled_error(request, "disk_full", error)
    return JSONResponse({"detail": DISK_FULL_DETAIL, "request_id": rid}, status_code=507)


def add_database_error_handlers(app: FastAPI) -> None:
    # PoolTimeout and DiskFull are OperationalErrors too; Starlette picks the handler of the closest class.
    app.add_exception_handler(PoolTimeout, pool_timeout)
    app.add_exception_handler(psycopg.errors.DiskFull, disk_full)
    app.add_exception_handler(psycopg.OperationalError, database_unavailable)


_AGENT_RUN_STATUS: dict[type[AgentRunError], int] = {
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    Unprocessable: 422,
    UnusableReply: 502,
    ModelUnreachable: 503,
}


async def agent_run_failed(request: Request, error: Exception) -> JSONResponse:
    # The body and headers an HTTPException with the same detail would give.
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, ModelUnreachable) else None
    status = next(code for kind, code in _AGENT_RUN_STATUS.items() if isinstance(error, kind))
    return JSONResponse(refusal_body(request, error), status_code=status, headers=headers)


def add_agent_run_error_handlers(app: FastAPI) -> None:
    for kind in _AGENT_RUN_STATUS:
        app.add_exception_handler(kind, agent_run_failed)

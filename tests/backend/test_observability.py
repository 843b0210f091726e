"""Request ids and the 500 answer, on a small app with the real middleware (no database needed)."""

import json
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, HTTPException, Request

from backend.middleware.request_context import HEADER, RequestContextMiddleware, request_id, request_id_for

SECRET = "the lecture notes say the exam is on page 42"


def make_app() -> FastAPI:
    app = FastAPI()
    app.add_middleware(RequestContextMiddleware)

    @app.get("/ok")
    async def ok(request: Request) -> dict[str, str]:
        return {"request_id": request_id(request)}

    @app.get("/boom")
    async def boom() -> None:
        raise ValueError(SECRET)  # a message that could carry document text

    @app.get("/missing")
    async def missing() -> None:
        raise HTTPException(404, "Nope.")

    return app


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    # raise_app_exceptions=False: nothing should escape anyway; the middleware answers the 500 itself.
    transport = httpx.ASGITransport(app=make_app(), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


def test_incoming_ids_are_kept_only_when_sane() -> None:
    assert request_id_for("3f2a-OK_id.1:2") == "3f2a-OK_id.1:2"
    for bad in (None, "", "has space", "x" * 200, "line\nbreak", '{"json": 1}'):
        generated = request_id_for(bad)
        assert generated != bad and len(generated) == 32 and generated.isalnum()


async def test_every_response_carries_the_request_id(http: httpx.AsyncClient) -> None:
    first, second = await http.get("/ok"), await http.get("/ok")
    assert first.headers[HEADER] == first.json()["request_id"]
    assert first.headers[HEADER] != second.headers[HEADER]
    echoed = await http.get("/ok", headers={HEADER: "client-abc-123"})
    assert echoed.headers[HEADER] == "client-abc-123" == echoed.json()["request_id"]
    forged = await http.get("/ok", headers={HEADER: "evil\tid"})
    assert forged.headers[HEADER] != "evil\tid"
    handled = await http.get("/missing")
    assert handled.status_code == 404 and handled.headers[HEADER]


async def test_unhandled_error_is_a_500_with_the_request_id_and_a_log_line_without_the_message(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="studyai.requests"):
        response = await http.get("/boom", headers={HEADER: "req-500"})
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal server error", "request_id": "req-500"}
    assert response.headers[HEADER] == "req-500"
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "studyai.requests"]
    error = next(line for line in lines if line["event"] == "unhandled_error")
    assert error["request_id"] == "req-500" and error["error_type"] == "ValueError"
    assert error["path"] == "/boom" and any("test_observability.py" in f for f in error["frames"])
    access = next(line for line in lines if line["event"] == "http")
    assert access["status"] == 500 and access["request_id"] == "req-500"
    assert SECRET not in caplog.text


async def test_the_access_log_never_holds_a_join_code_or_a_one_time_token(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    secrets = {
        "/join/ABCDE-12345": "ABCDE",
        "/auth/reset/tok-secret-1": "tok-secret",
        "/auth/ticket/tk-9": "tk-9",
    }
    for path in secrets:
        await http.get(path)
    lines = [json.loads(r.getMessage()) for r in caplog.records if '"event": "http"' in r.getMessage()]
    logged = {line["path"] for line in lines}
    assert {"/join/[redacted]", "/auth/reset/[redacted]", "/auth/ticket/[redacted]"} <= logged
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("studyai"))
    assert not any(secret in ours for secret in secrets.values())
    await http.get("/ok")
    assert '"path": "/ok"' in caplog.text

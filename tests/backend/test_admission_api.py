"""The chat model's admission queue through the API, with a slow fake OpenAI-compatible chat server:
a second streamed answer waits (SSE `queued`) instead of cutting the first, and both equal their solo
answers; a full queue answers 429 with Retry-After; a client that goes away frees its place; a model
server that is down answers 503 within seconds."""

import asyncio
import hashlib
import json
import re
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from benchmarks.fake_model import USAGE, ThreadedServer, completion, free_port, sse_chunk
from core.confidence import uncalibrated
from core.confidence.source import PinnedCalibration
from core.llm.admission import LlmAdmission
from core.llm.chat import make_chat_model
from core.llm.local import SERVER_CHILD
from core.runtime.supervisor import ChildSpec, RestartPolicy, Supervisor
from core.settings import Settings
from tests.backend.conftest import OwnApps
from tests.conftest import (
    SHARED_DATA,
    Caller,
    change_runtime,
    create_project,
    index_documents,
)

CHAPTER = "ch08-02-strings.md"
QUESTIONS = [
    "What is the difference between using a + b and a.push_str(b) to concatenate two strings?",
    "Why can't you index into a String in Rust?",
]


class FakeChatServer(ThreadedServer):
    """An OpenAI-compatible chat endpoint that answers slowly and deterministically (from the prompt's
    hash), citing the first excerpt it was shown, and counts how many requests overlap."""

    def __init__(self) -> None:
        self.in_flight = self.max_in_flight = self.requests = 0
        self._lock = threading.Lock()
        super().__init__(Starlette(routes=[Route("/v1/chat/completions", self.complete, methods=["POST"])]))
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def _enter(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta
            self.requests += max(delta, 0)
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    async def complete(self, request: Request) -> Response:
        body = await request.json()
        prompt = body["messages"][-1]["content"]
        schema = json.dumps(body.get("response_format", {}))
        if "has_answer" in schema:
            cited = [int(m) for m in re.findall(r"\[(\d+)\]", prompt)[:1]]
            digest = hashlib.sha256(prompt.encode()).hexdigest()[:12]
            # In the excerpts' own words, so that the answer-support check lets it through.
            said = " ".join(re.findall(r"[A-Za-z]{4,}", prompt.split("<excerpts>")[-1])[:12])
            reply = {"answer": f"Answer {digest}: {said}.", "has_answer": True,
                     "used_chunk_ids": cited}  # fmt: skip
        else:  # the planner: the question stands as asked
            reply = {"question": "", "terms": [], "document": "", "ambiguous": False, "clarification": ""}
        content = json.dumps(reply)
        self._enter(1)
        if not body.get("stream"):
            try:
                await asyncio.sleep(0.3)
                return JSONResponse(completion(content))
            finally:
                self._enter(-1)
        return StreamingResponse(self._chunks(content), media_type="text/event-stream")

    async def _chunks(self, content: str) -> AsyncIterator[str]:
        try:
            for i in range(0, len(content), 8):
                await asyncio.sleep(0.04)
                yield sse_chunk({"role": "assistant", "content": content[i : i + 8]}, None)
            yield sse_chunk({}, "stop")
            yield sse_chunk({}, None, usage=USAGE)
            yield "data: [DONE]\n\n"
        finally:
            self._enter(-1)


@dataclass
class Setup:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    project_id: str
    fake: FakeChatServer


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeChatServer]:
    with FakeChatServer() as server:
        yield server


@pytest.fixture(scope="module")
async def setup(own_apps: OwnApps, fake_model: FakeChatServer) -> AsyncIterator[Setup]:
    async with own_apps.open(timeout=60) as (app, http):
        owner = await own_apps.make_user("admission")
        project_id = await create_project(http, owner, name="strings", language="en")
        text = (SHARED_DATA / "rust-book" / "src" / CHAPTER).read_text()
        await index_documents(http, owner, project_id, {CHAPTER: text})
        # A scripted model of its own: the embedded model's calibration would judge its made-up answers.
        fake = make_chat_model(own_apps.settings, base_url=fake_model.url)
        change_runtime(app, llm=fake, calibrations=PinnedCalibration(uncalibrated("fake", "fake")))
        yield Setup(app, http, owner, project_id, fake_model)


@pytest.fixture
def admission(setup: Setup) -> LlmAdmission:
    """A queue of the test's own: one slot, at most one waiting request."""
    admission = LlmAdmission(
        setup.app.state.runtime.redis,
        concurrency=1,
        queue_max=1,
        poll_s=0.05,
        namespace=f"test-api:{uuid.uuid4().hex}",
    )
    change_runtime(setup.app, admission=admission)
    return admission


async def streamed(setup: Setup, question: str) -> list[tuple[str, Any]]:
    """(event, data) of a streamed answer; comments (keep-alives) as ("comment", text)."""
    url = f"/projects/{setup.project_id}/qa"
    response = await setup.http.post(url, json={"question": question, "stream": True}, headers=setup.owner)
    assert response.status_code == 200, response.text
    events: list[tuple[str, Any]] = []
    for block in response.text.split("\n\n"):
        if block.startswith(":"):
            events.append(("comment", block))
        elif block:
            name, data = block.split("\n", 1)
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def answer_of(events: list[tuple[str, Any]]) -> str:
    done = [data for name, data in events if name == "done"]
    assert len(done) == 1, events
    assert "".join(data["text"] for name, data in events if name == "token") == done[0]["answer"]
    return done[0]["answer"]


async def test_a_second_stream_waits_its_turn_and_neither_is_cut(
    setup: Setup, admission: LlmAdmission
) -> None:
    solo = [answer_of(await streamed(setup, q)) for q in QUESTIONS]
    assert solo[0] != solo[1] and all(a.startswith("Answer ") for a in solo)
    before = setup.fake.requests
    first = asyncio.ensure_future(streamed(setup, QUESTIONS[0]))
    while setup.fake.requests == before:  # the first holds the slot and is talking to the model
        await asyncio.sleep(0.01)
    second = await streamed(setup, QUESTIONS[1])
    first_events = await first
    assert [answer_of(first_events), answer_of(second)] == solo
    # The second read its evidence at once, was told its place, then answered in full.
    assert second[0][0] == "evidence" and second[1] == ("queued", {"position": 1}), second[:3]
    # Its turn came before its first token: position 0 (a client stops showing a place in the queue).
    places = [data["position"] for name, data in second if name == "queued"]
    first_token = next(i for i, (name, _) in enumerate(second) if name == "token")
    assert places[-1] == 0 and second.index(("queued", {"position": 0})) < first_token, second[:6]
    assert [name for name, _ in second if name in ("token", "done")][-1] == "done"
    assert "queued" not in [name for name, _ in first_events]
    assert setup.fake.max_in_flight == 1


async def test_a_full_queue_answers_429_with_retry_after(setup: Setup, admission: LlmAdmission) -> None:
    holder = await admission.enqueue(user="someone")
    waiting = await admission.enqueue(user="someone-else")
    url = f"/projects/{setup.project_id}/qa"
    try:
        for stream in (False, True):
            started = time.perf_counter()
            response = await setup.http.post(
                url, json={"question": QUESTIONS[0], "stream": stream}, headers=setup.owner
            )
            assert response.status_code == 429, response.text
            assert int(response.headers["Retry-After"]) >= 1
            assert time.perf_counter() - started < 5  # at once, not after a wait
        plan = await setup.http.post(f"/projects/{setup.project_id}/plans", json={}, headers=setup.owner)
        assert plan.status_code == 429 and "Retry-After" in plan.headers
    finally:
        await holder.release()
        await waiting.release()


async def test_a_client_that_goes_away_frees_its_place(setup: Setup, admission: LlmAdmission) -> None:
    admission.queue_max = 5
    holder = await admission.enqueue(user="someone")
    url = f"/projects/{setup.project_id}/qa"
    request = asyncio.ensure_future(
        setup.http.post(url, json={"question": QUESTIONS[0], "stream": True}, headers=setup.owner)
    )
    deadline = time.monotonic() + 10
    while True:  # until the request waits in the queue, ahead of this ticket
        behind = await admission.enqueue(user="behind")
        if behind.position == 2:
            break
        await behind.release()
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    request.cancel()  # the client disconnects while queued
    await asyncio.gather(request, return_exceptions=True)
    async for position in behind.wait(tick_s=0.05):
        if position == 1:
            break
    await holder.release()
    await asyncio.wait_for(behind.acquired(), 10)  # granted: nothing else holds or waits
    await behind.release()


async def test_a_model_server_that_is_down_answers_503_within_seconds(
    setup: Setup, admission: LlmAdmission, settings: Settings
) -> None:
    working = setup.app.state.runtime.llm
    change_runtime(setup.app, llm=make_chat_model(settings, base_url=f"http://127.0.0.1:{free_port()}/v1"))
    url = f"/projects/{setup.project_id}/qa"
    try:
        started = time.perf_counter()
        response = await setup.http.post(url, json={"question": QUESTIONS[0]}, headers=setup.owner)
        assert response.status_code == 503, response.text
        assert "unreachable" in response.json()["detail"] and int(response.headers["Retry-After"]) > 0
        assert time.perf_counter() - started < 15
        events = await streamed(setup, QUESTIONS[0])
        (error,) = [data for name, data in events if name == "error"]
        assert "unreachable" in error["detail"] and error["retry_after"] > 0
    finally:
        change_runtime(setup.app, llm=working)
    # The failed requests freed their slot.
    async with admission.slot(user="after") as ticket:
        assert ticket.granted


async def test_while_the_model_server_restarts_model_requests_answer_503_at_once(setup: Setup) -> None:
    """A hung or dead embedded server is being replaced (`studyai up`'s supervisor says so): a question
    answers 503 with Retry-After at once instead of waiting on a server that is not there."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    with Supervisor(RestartPolicy(stop_timeout_s=5)) as supervisor:
        supervisor.start(ChildSpec(SERVER_CHILD, sleeper, {}))
        before = setup.app.state.api_resources
        setup.app.state.api_resources = replace(before, supervisor=supervisor)
        try:
            url = f"/projects/{setup.project_id}/qa"
            running = await setup.http.post(url, json={"question": QUESTIONS[0]}, headers=setup.owner)
            assert running.status_code == 200, running.text  # the fake model answers
            supervisor.stop()  # the server is down: as between a hang's kill and the new process
            started = time.perf_counter()
            down = await setup.http.post(url, json={"question": QUESTIONS[0]}, headers=setup.owner)
            assert down.status_code == 503 and "restarting" in down.json()["detail"]
            assert int(down.headers["Retry-After"]) > 0 and time.perf_counter() - started < 5
        finally:
            setup.app.state.api_resources = before

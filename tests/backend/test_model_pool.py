"""A pool of model servers (LLM_BASE_URLS, core/llm/pool.py) through the API, with two fake
OpenAI-compatible servers that count their requests and how many overlap: more clients than slots never
put more calls on a server than its slots; a project's runs stay on the server that holds its prompts; a
server's own slot count (llama.cpp's /props) is the one every caller admits; a server that dies is left
out and its callers are answered by the other, streamed or not."""

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from benchmarks.fake_answers import CitingChatServer
from core.confidence import uncalibrated
from core.confidence.source import PinnedCalibration
from core.llm.pool import ModelPool, _rank
from tests.backend.conftest import OwnApps
from tests.conftest import SHARED_DATA, Caller, change_runtime, create_project, index_documents, own_app

CHAPTER = "ch08-02-strings.md"
QUESTION = "Why can't you index into a String in Rust?"


class CountingServer(CitingChatServer):
    """CitingChatServer that holds each call `hold_s` and counts overlapping calls; `/props` reports
    `total_slots` when set, as llama.cpp's server does."""

    def __init__(
        self, hold_s: float = 0.3, total_slots: int | None = None, *, slow_cue: str = "", slow_s: float = 30
    ) -> None:
        super().__init__(delay_s=0.0)
        self.hold_s, self.total_slots = hold_s, total_slots
        self.slow_cue, self.slow_s = slow_cue, slow_s  # a call whose prompt holds the cue is held slow_s
        self.in_flight = self.peak = self.calls = 0
        self._lock = threading.Lock()
        self.add_route("/props", self._props)

    def kill(self) -> None:
        """Gone at once, like a killed process: open calls are cut, new ones refused."""
        self._server.force_exit = self._server.should_exit = True
        self._thread.join(30)

    async def _props(self, request: Request) -> Response:
        if self.total_slots is None:
            return JSONResponse({"error": "not found"}, status_code=404)
        return JSONResponse({"total_slots": self.total_slots})

    async def _reply(self, body: dict[str, Any]) -> Response:
        with self._lock:
            self.in_flight += 1
            self.calls += 1
            self.peak = max(self.peak, self.in_flight)
        slow = bool(self.slow_cue) and self.slow_cue in json.dumps(body.get("messages", []))
        try:
            await asyncio.sleep(self.slow_s if slow else self.hold_s)
            return await super()._reply(body)
        finally:
            with self._lock:
                self.in_flight -= 1


@dataclass
class Pool:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    servers: list[CountingServer]
    projects: dict[int, str]  # server index -> a project routed to it first

    async def ask(self, project: str, *, stream: bool = False) -> dict[str, Any]:
        response = await self.http.post(
            f"/projects/{project}/qa", json={"question": QUESTION, "stream": stream}, headers=self.owner
        )
        assert response.status_code == 200, response.text
        if not stream:
            return dict(response.json())
        events = [block.split("\n", 1) for block in response.text.split("\n\n") if block.startswith("event:")]
        [done] = [json.loads(data.removeprefix("data: ")) for name, data in events if name == "event: done"]
        return dict(done)


@pytest.fixture(scope="module")
def servers() -> Iterator[list[CountingServer]]:
    with CountingServer() as first, CountingServer(total_slots=1) as second:
        yield [first, second]


@pytest.fixture(scope="module")
async def pool(own_apps: OwnApps, servers: list[CountingServer]) -> AsyncIterator[Pool]:
    # The second server reports 1 slot itself: that, not the 3 configured, is what every caller admits.
    spec = f"{servers[0].url}=2,{servers[1].url}=3"
    settings = own_apps.settings.with_values({"LLM_BASE_URLS": spec, "LLM_STRUCTURED_OUTPUT": "json_schema"})
    # As EmbeddedServices gives it: the first server is LLM_BASE_URL (core/settings/models.py).
    urls = replace(own_apps.services, llm_base_url=settings.llm.base_url)
    async with own_app(settings, urls, timeout=120) as (app, http):
        change_runtime(app, calibrations=PinnedCalibration(uncalibrated("fake", "fake")))
        owner = await own_apps.make_user("pool")
        models: ModelPool = app.state.runtime.models
        assert [r.endpoint.url for r in models.routes] == [s.url.rstrip("/") for s in servers]
        projects: dict[int, str] = {}
        text = (SHARED_DATA / "rust-book" / "src" / CHAPTER).read_text()
        while len(projects) < 2:  # one project routed first to each server
            project = await create_project(http, owner, name=f"strings {len(projects)}", language="en")
            first = max(range(2), key=lambda i: _rank(project, models.routes[i].endpoint))
            if first not in projects:
                await index_documents(http, owner, project, {CHAPTER: text})
                projects[first] = project
        yield Pool(app, http, owner, servers, projects)


async def test_no_server_takes_more_calls_than_its_slots(pool: Pool) -> None:
    loads = await pool.app.state.runtime.models.states()
    assert [slots for _, _, (_, _, slots) in loads] == [2, 1]  # the second server's own count
    answers = await asyncio.gather(*(pool.ask(pool.projects[i % 2]) for i in range(10)))
    assert all(a["outcome"] == "answered" for a in answers)
    assert [s.peak for s in pool.servers] == [2, 1]  # both were full at some point, never over


async def test_a_projects_runs_stay_on_its_server_while_it_has_room(pool: Pool) -> None:
    for index, project in pool.projects.items():
        before = [s.calls for s in pool.servers]
        for _ in range(3):
            await pool.ask(project)
        after = [s.calls for s in pool.servers]
        assert after[index] > before[index] and after[1 - index] == before[1 - index], (index, before, after)


async def test_a_dead_server_is_left_out_and_its_callers_answered_by_the_other(pool: Pool) -> None:
    dead = pool.servers[0]
    project = pool.projects[0]
    routes = pool.app.state.runtime.models.routes
    down_keys = [f"studyai:llm:down:{route.endpoint.key}" for route in routes]
    dead.__exit__()  # its port now refuses connections
    try:
        answer = await pool.ask(project)
        assert answer["outcome"] == "answered"
        # Forgotten (as after LLM_ENDPOINT_DOWN_S): a stream is routed to it again, and moves.
        await pool.app.state.runtime.redis.delete(*down_keys)
        streamed = await pool.ask(project, stream=True)
        assert streamed["outcome"] == "answered" and streamed["answer"] == answer["answer"]
        ready = (await pool.http.get("/health/ready")).json()["components"]
        where = dead.url.split("://", 1)[1].split("/", 1)[0]
        assert ready[f"chat_model:{where}"]["status"] == "down", ready
        assert "left out of routing" in ready[f"chat_model:{where}"]["detail"]
        assert ready["chat_model"]["status"] == "degraded"
    finally:
        await pool.app.state.runtime.redis.delete(*down_keys)

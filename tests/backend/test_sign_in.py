"""Password sign-in and browser sessions over HTTP: the cookie, CSRF on every cookie-authenticated write,
a foreign Origin refused, sign-out, a disabled account and a removed member losing access at once."""

import time
from typing import Any

import httpx
import psycopg
import pytest

from core.accounts.passwords import hash_password
from core.store.accounts import accounts
from tests.backend.conftest import Api
from tests.conftest import add_member, create_project

PASSWORD = "correct horse battery staple 42"


async def account(db: psycopg.AsyncConnection[dict[str, Any]], name: str = "person") -> str:
    email = f"{name}-{time.time_ns()}@school.example"
    created = await accounts.create_account(db, email=email, password_hash=hash_password(PASSWORD))
    assert created is not None
    return email


async def sign_in(http: httpx.AsyncClient, email: str, password: str = PASSWORD) -> dict[str, str]:
    """Signs the client in (its cookie jar keeps the session); the CSRF header for its writes."""
    response = await http.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


@pytest.fixture
async def browser(api: Api) -> Any:
    """A client of its own (its own cookie jar) on the module's app."""
    async with api.browser() as http:
        yield http


async def test_a_password_signs_in_to_a_cookie_session(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    csrf = await sign_in(browser, email)
    cookie = browser.cookies.get("studyai_session")
    assert cookie and len(cookie) >= 40
    session = (await browser.get("/auth/session")).json()
    assert session["user"]["email"] == email and session["csrf_token"] == csrf["X-CSRF-Token"]
    created = await browser.post("/projects", json={"name": "Biology"}, headers=csrf)
    assert created.status_code == 201, created.text
    assert created.json()["id"] in [p["id"] for p in (await browser.get("/projects")).json()]


async def test_the_cookie_is_httponly_and_lax(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    response = await browser.post("/auth/login", json={"email": email, "password": PASSWORD})
    header = response.headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=lax" in header and "secure" not in header  # plain http here


async def test_a_wrong_password_and_an_unknown_email_answer_alike(
    browser: httpx.AsyncClient, db: Any
) -> None:
    email = await account(db)
    wrong = await browser.post("/auth/login", json={"email": email, "password": "not the password"})
    unknown = await browser.post("/auth/login", json={"email": "nobody@school.example", "password": "x"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["detail"] == unknown.json()["detail"]
    assert "studyai_session" not in browser.cookies


async def test_a_cookie_write_without_the_csrf_token_is_refused(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    csrf = await sign_in(browser, email)
    missing = await browser.post("/projects", json={"name": "No token"})
    wrong = await browser.post("/projects", json={"name": "Wrong"}, headers={"X-CSRF-Token": "guess"})
    assert missing.status_code == wrong.status_code == 403
    foreign = await browser.post(
        "/projects", json={"name": "Foreign"}, headers={**csrf, "Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403 and "Origin" in foreign.json()["detail"]
    same = await browser.post(
        "/projects", json={"name": "Same"}, headers={**csrf, "Origin": "http://studyai.test"}
    )
    assert same.status_code == 201


async def test_a_cross_site_sign_in_is_refused(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    response = await browser.post(
        "/auth/login", json={"email": email, "password": PASSWORD}, headers={"Origin": "https://evil.example"}
    )
    assert response.status_code == 403 and "studyai_session" not in browser.cookies


async def test_sign_out_ends_the_session_everywhere(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    csrf = await sign_in(browser, email)
    cookie = browser.cookies["studyai_session"]
    assert (await browser.post("/auth/logout", headers=csrf)).status_code == 204
    assert "studyai_session" not in browser.cookies
    replayed = await browser.get("/projects", cookies={"studyai_session": cookie})
    assert replayed.status_code == 401


async def test_an_idle_session_ends(browser: httpx.AsyncClient, db: Any) -> None:
    email = await account(db)
    await sign_in(browser, email)
    assert (await browser.get("/projects")).status_code == 200
    await db.execute(
        "UPDATE browser_sessions SET last_seen_at = now() - interval '13 hours'"
        " WHERE user_id = (SELECT id FROM users WHERE email = %s)",
        (email,),
    )
    ended = await browser.get("/projects")
    assert ended.status_code == 401 and "sign in again" in ended.json()["detail"]


async def test_a_disabled_account_loses_sessions_and_keys_on_its_next_request(
    browser: httpx.AsyncClient, api: Api, db: Any, make_user: Any
) -> None:
    caller = await make_user("disabled")
    await db.execute(
        "UPDATE users SET password_hash = %s WHERE id = %s", (hash_password(PASSWORD), caller.id)
    )
    await sign_in(browser, caller.email)
    assert (await browser.get("/projects")).status_code == 200
    assert (await api.http.get("/projects", headers=caller)).status_code == 200
    await accounts.set_disabled(db, user_id=caller.id, disabled=True)
    assert (await browser.get("/projects")).status_code == 401
    assert (await api.http.get("/projects", headers=caller)).status_code == 401
    assert (
        await browser.post("/auth/login", json={"email": caller.email, "password": PASSWORD})
    ).status_code == 401


async def test_a_removed_members_session_gets_404_at_once(
    browser: httpx.AsyncClient, api: Api, db: Any, make_user: Any
) -> None:
    owner = await make_user("owner")
    student = await make_user("student")
    await db.execute(
        "UPDATE users SET password_hash = %s WHERE id = %s", (hash_password(PASSWORD), student.id)
    )
    project_id = await create_project(api.http, owner, name="Chemistry")
    await add_member(api.http, owner, project_id, student, "viewer")
    await sign_in(browser, student.email)
    assert (await browser.get(f"/projects/{project_id}")).status_code == 200
    removed = await api.http.delete(f"/projects/{project_id}/members/{student.id}", headers=owner)
    assert removed.status_code == 204
    assert (await browser.get(f"/projects/{project_id}")).status_code == 404


async def test_api_keys_need_no_csrf_token(api: Api, make_user: Any) -> None:
    caller = await make_user("script")
    response = await api.http.post("/projects", json={"name": "Scripted"}, headers=caller)
    assert response.status_code == 201


async def test_a_password_is_stored_only_as_an_argon2id_hash(db: Any) -> None:
    email = await account(db)
    cur = await db.execute("SELECT password_hash FROM users WHERE email = %s", (email,))
    stored = (await cur.fetchone())["password_hash"]
    assert stored.startswith("$argon2id$") and PASSWORD not in stored

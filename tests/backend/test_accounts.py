"""Self-service accounts over HTTP: sign-up (off by default, weak and taken refused), the account's own
profile, password change (other sessions end, a wrong current password counts as a failed sign-in),
its browser sessions (listed, revoked at once), and a burst of sign-ins larger than the pools."""

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import psycopg

from core.accounts.passwords import hash_password
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, sessions
from tests.backend.conftest import Api
from tests.conftest import changed_settings, own_app

PASSWORD = "correct horse battery staple 42"
NEW_PASSWORD = "a different long passphrase 7"
Conn = psycopg.AsyncConnection[dict[str, Any]]


def new_email(name: str = "person") -> str:
    return f"{name}-{time.time_ns()}@school.example"


async def account(db: Conn, name: str = "person", password_hash: str | None = None) -> str:
    email = new_email(name)
    created = await accounts.create_account(
        db, email=email, password_hash=password_hash or hash_password(PASSWORD)
    )
    assert created is not None
    return email


@asynccontextmanager
async def browser(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    """A client with its own cookie jar on the module's app: one browser."""
    async with api.browser(timeout=120) as http:
        yield http


async def sign_in(http: httpx.AsyncClient, email: str, password: str = PASSWORD) -> dict[str, str]:
    """Signs the browser in; the CSRF header for its writes."""
    response = await http.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


async def events(db: Conn, email: str) -> list[tuple[str, Any]]:
    cur = await db.execute(
        "SELECT action, details FROM security_events WHERE target_user_id = (SELECT id FROM users"
        " WHERE email = %s) ORDER BY id",
        (email,),
    )
    return [(row["action"], row["details"]) for row in await cur.fetchall()]


async def test_sign_up_is_off_unless_the_server_allows_it(api: Api, db: Conn) -> None:
    email = new_email()
    async with browser(api) as http:
        response = await http.post("/auth/signup", json={"email": email, "password": PASSWORD})
        assert response.status_code == 403 and "invitation code" in response.json()["detail"]
        assert "studyai_session" not in http.cookies
    assert await accounts.account_by_email(db, email=email) is None


async def test_sign_up_creates_an_account_and_signs_the_browser_in(api: Api, db: Conn) -> None:
    email = new_email("New.Student")
    async with browser(api) as http, browser(api) as other:
        with changed_settings(api.app, SIGNUP_ENABLED=True):
            body = {"email": email, "password": PASSWORD, "display_name": "  Ada  "}
            response = await http.post("/auth/signup", json=body)
        assert response.status_code == 201, response.text
        session = response.json()
        assert session["user"]["email"] == email.lower() and session["user"]["display_name"] == "Ada"
        assert session["user"]["is_admin"] is False and session["session_id"]
        assert "httponly" in response.headers["set-cookie"].lower()
        assert (await http.get("/auth/session")).json()["user"]["email"] == email.lower()
        csrf = {"X-CSRF-Token": session["csrf_token"]}
        assert (await http.post("/projects", json={"name": "Mine"}, headers=csrf)).status_code == 201
        await sign_in(other, email.upper())  # the password signs in later too, any case of the email
    stored = await accounts.password_hash_of(db, user_id=uuid.UUID(session["user"]["id"]))
    assert stored is not None and stored.startswith("$argon2id$")
    logged = await events(db, email.lower())
    assert ("user.created", {"via": "signup"}) in logged and ("session.created", {"via": "signup"}) in logged


async def test_sign_up_refuses_weak_passwords_with_the_reason_and_a_taken_email(api: Api, db: Conn) -> None:
    taken = await account(db, "taken")
    email = new_email()
    cases = {"password123456": "too common", "short1": "too short", email: "email"}
    async with browser(api) as http:
        with changed_settings(api.app, SIGNUP_ENABLED=True):
            for password, reason in cases.items():
                weak = await http.post("/auth/signup", json={"email": email, "password": password})
                assert weak.status_code == 422 and reason in weak.json()["detail"], (password, weak.text)
            again = await http.post("/auth/signup", json={"email": taken.upper(), "password": PASSWORD})
            assert again.status_code == 409
            blank = await http.post(
                "/auth/signup", json={"email": email, "password": PASSWORD, "display_name": " "}
            )
            assert blank.status_code == 422
            foreign = await http.post(
                "/auth/signup",
                json={"email": email, "password": PASSWORD},
                headers={"Origin": "https://evil.example"},
            )
            assert foreign.status_code == 403
        assert "studyai_session" not in http.cookies
    assert await accounts.account_by_email(db, email=email) is None


async def test_me_shows_the_account_and_never_its_hash(api: Api, db: Conn, make_user: Any) -> None:
    email = await account(db, "me")
    async with browser(api) as http:
        csrf = await sign_in(http, email)
        me = await http.get("/me")
        assert me.status_code == 200
        assert set(me.json()) == {
            "id",
            "email",
            "display_name",
            "is_admin",
            "is_teacher",
            "has_password",
            "email_verified",
            "school_login",
            "created_at",
        }
        assert me.json()["email"] == email and me.json()["has_password"] is True
        assert "argon2" not in me.text and "hash" not in me.text
        assert (await http.patch("/me", json={"display_name": "Grace"})).status_code == 403  # no CSRF token
        named = await http.patch("/me", json={"display_name": " Grace "}, headers=csrf)
        assert named.status_code == 200 and named.json()["display_name"] == "Grace"
        assert (await http.get("/auth/session")).json()["user"]["display_name"] == "Grace"
        too_long = await http.patch("/me", json={"display_name": "x" * 201}, headers=csrf)
        assert too_long.status_code == 422
        cleared = await http.patch("/me", json={"display_name": None}, headers=csrf)
        assert cleared.status_code == 200 and cleared.json()["display_name"] is None
    keyed = await make_user("keyed")
    assert (await api.http.get("/me", headers=keyed)).json()["has_password"] is False


async def test_a_password_change_ends_every_other_session_and_keeps_this_one(api: Api, db: Conn) -> None:
    email = await account(db, "changer")
    async with browser(api) as laptop, browser(api) as phone, browser(api) as later:
        csrf = await sign_in(laptop, email)
        await sign_in(phone, email)
        body = {"current_password": PASSWORD, "new_password": NEW_PASSWORD}
        changed = await laptop.post("/me/password", json=body, headers=csrf)
        assert changed.status_code == 204, changed.text
        assert (await laptop.get("/me")).status_code == 200
        assert (await phone.get("/me")).status_code == 401
        old = await later.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert old.status_code == 401
        await sign_in(later, email, NEW_PASSWORD)
    assert ("password.changed", {"first": False, "sessions_ended": 1}) in await events(db, email)


async def test_a_password_change_needs_the_current_one_and_a_strong_new_one(api: Api, db: Conn) -> None:
    email = await account(db, "guarded")
    async with browser(api) as http:
        csrf = await sign_in(http, email)
        wrong = await http.post(
            "/me/password", json={"current_password": "not it", "new_password": NEW_PASSWORD}, headers=csrf
        )
        missing = await http.post("/me/password", json={"new_password": NEW_PASSWORD}, headers=csrf)
        assert wrong.status_code == missing.status_code == 403
        weak = await http.post(
            "/me/password",
            json={"current_password": PASSWORD, "new_password": "password123456"},
            headers=csrf,
        )
        assert weak.status_code == 422 and "too common" in weak.json()["detail"]
        assert (await http.get("/me")).status_code == 200  # a refused change ends nothing
        await sign_in(http, email)  # and the password is the old one still
    assert ("signin.failed", {"via": "password-change"}) in await events(db, email)


async def school_session(db: Conn, user_id: Any, *, minutes_ago: int = 0) -> str:
    """A browser session of the account from a school sign-in (OIDC) started `minutes_ago`: its cookie."""
    new = await sessions.create_session(db, user_id=user_id, via="oidc", max_days=1)
    await db.execute(
        "UPDATE browser_sessions SET created_at = now() - make_interval(mins => %s) WHERE id = %s",
        (minutes_ago, new.session.id),
    )
    return new.token


async def test_an_account_without_a_password_sets_its_first_only_with_fresh_proof(
    api: Api, db: Conn, make_user: Any
) -> None:
    """A first password needs a school sign-in of the last FRESH_SIGN_IN_MINUTES: not an API key (a key
    stolen once would otherwise become a password), not a school session of an hour ago."""
    keyed = await make_user("school-only")
    body = {"new_password": NEW_PASSWORD}
    by_key = await api.http.post("/me/password", json=body, headers=keyed)
    assert by_key.status_code == 403 and "school account" in by_key.json()["detail"]
    stale = await school_session(db, keyed.id, minutes_ago=60)
    async with browser(api) as http:
        http.cookies.set("studyai_session", stale)
        csrf = {"X-CSRF-Token": (await http.get("/auth/session")).json()["csrf_token"]}
        assert (await http.post("/me/password", json=body, headers=csrf)).status_code == 403
    assert (await api.http.get("/me", headers=keyed)).json()["has_password"] is False
    fresh = await school_session(db, keyed.id)
    async with browser(api) as http:
        http.cookies.set("studyai_session", fresh)
        csrf = {"X-CSRF-Token": (await http.get("/auth/session")).json()["csrf_token"]}
        first = await http.post("/me/password", json=body, headers=csrf)
        assert first.status_code == 204, first.text
        assert (await http.get("/me")).json()["has_password"] is True  # this session stays
    assert (await api.http.get("/me", headers=keyed)).status_code == 401  # every key ended with it
    async with browser(api) as http:
        await sign_in(http, keyed.email, NEW_PASSWORD)


async def test_wrong_current_passwords_spend_the_accounts_sign_in_budget(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    generous = "100000/minute"
    limited = settings.with_values(
        {
            "RATE_LIMIT_ENABLED": True,
            **{f"RATE_LIMIT_{name}": generous for name in ("AGENT", "UPLOAD", "READ", "PER_ADDRESS")},
            "RATE_LIMIT_AUTH_FAILURES": generous,
            "RATE_LIMIT_LOGIN_FAILURES": "2/minute",
        }
    )
    email = await account(db, "guessed")
    async with own_app(limited, services, timeout=120) as (_, http):
        csrf = await sign_in(http, email)
        guess = {"current_password": "guess", "new_password": NEW_PASSWORD}
        statuses = [(await http.post("/me/password", json=guess, headers=csrf)).status_code for _ in range(3)]
        assert statuses == [403, 403, 429]
        refused = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert refused.status_code == 429 and "Retry-After" in refused.headers


async def test_sessions_are_listed_with_the_current_one_marked(api: Api, db: Conn) -> None:
    email = await account(db, "lister")
    async with browser(api) as laptop, browser(api) as phone:
        await sign_in(laptop, email)
        await sign_in(phone, email)
        mine = (await laptop.get("/auth/session")).json()["session_id"]
        listed = (await laptop.get("/me/sessions")).json()
    assert len(listed) == 2 and [s["id"] for s in listed if s["current"]] == [mine]
    expected = {"id", "via", "user_agent", "address", "created_at", "last_seen_at", "expires_at", "current"}
    assert all(set(s) == expected and s["via"] == "password" for s in listed)


async def test_revoking_a_session_ends_it_at_once(api: Api, db: Conn) -> None:
    email, stranger = await account(db, "owner"), await account(db, "stranger")
    async with browser(api) as laptop, browser(api) as phone, browser(api) as theirs:
        csrf = await sign_in(laptop, email)
        await sign_in(phone, email)
        await sign_in(theirs, stranger)
        phone_id = (await phone.get("/auth/session")).json()["session_id"]
        their_id = (await theirs.get("/auth/session")).json()["session_id"]
        assert (await laptop.delete(f"/me/sessions/{phone_id}", headers=csrf)).status_code == 204
        assert (await phone.get("/me")).status_code == 401
        assert [s["current"] for s in (await laptop.get("/me/sessions")).json()] == [True]
        for unknown in (phone_id, their_id, str(uuid.uuid4())):
            assert (await laptop.delete(f"/me/sessions/{unknown}", headers=csrf)).status_code == 404
        assert (await theirs.get("/me")).status_code == 200  # another's session is untouched
        mine = (await laptop.get("/auth/session")).json()["session_id"]
        own = await laptop.delete(f"/me/sessions/{mine}", headers=csrf)
        assert own.status_code == 204 and "studyai_session" not in laptop.cookies
    assert [a for a, d in await events(db, email) if a == "session.revoked"] == ["session.revoked"] * 2


async def test_more_concurrent_sign_ins_than_threads_and_connections(api: Api, db: Conn) -> None:
    """24 sign-ins and 24 sign-ups at once: Argon2 runs in the default executor (a few threads on two
    cores) with no connection held, so the pool (DATABASE_POOL_SIZE=20) never runs dry."""
    shared_hash = hash_password(PASSWORD)
    emails = [await account(db, f"crowd{n}", shared_hash) for n in range(24)]
    newcomers = [new_email(f"newcomer{n}") for n in range(24)]
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(browser(api)) for _ in range(48)]
        with changed_settings(api.app, SIGNUP_ENABLED=True):
            answers = await asyncio.gather(
                *(
                    http.post("/auth/login", json={"email": e, "password": PASSWORD})
                    for http, e in zip(clients[:24], emails, strict=True)
                ),
                *(
                    http.post("/auth/signup", json={"email": e, "password": PASSWORD})
                    for http, e in zip(clients[24:], newcomers, strict=True)
                ),
            )
        assert [r.status_code for r in answers] == [200] * 24 + [201] * 24, [
            r.text for r in answers if r.is_error
        ]
        who = await asyncio.gather(*(http.get("/auth/session") for http in clients))
        assert [r.json()["user"]["email"] for r in who] == emails + newcomers

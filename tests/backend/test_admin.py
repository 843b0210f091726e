"""Server administration over HTTP: the first administrator from the set-up token, administrators'
routes (accounts, disabling at once, the security log), password reset links (an administrator's and a
project owner's, within their rules) used once through POST /auth/reset."""

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from core.accounts.passwords import hash_password
from core.store.accounts import accounts
from tests.backend.conftest import Api
from tests.conftest import Caller, UserFactory, add_member, create_project

PASSWORD = "correct horse battery staple 42"
NEW_PASSWORD = "a brand new passphrase 7 for reset"


@pytest.fixture
async def browser(api: Api) -> AsyncIterator[httpx.AsyncClient]:
    """A client with its own cookie jar on the module's app."""
    async with api.browser() as http:
        yield http


other_browser = browser  # a second browser: the same fixture under another name, a client of its own


async def with_password(db: Any, caller: Caller, password: str = PASSWORD) -> Caller:
    await accounts.set_password(db, user_id=caller.id, password_hash=hash_password(password))
    return caller


async def admin_user(db: Any, make_user: UserFactory) -> Caller:
    admin = await make_user("admin")
    await accounts.set_admin(db, user_id=admin.id)
    return admin


async def sign_in(http: httpx.AsyncClient, email: str, password: str = PASSWORD) -> dict[str, str]:
    response = await http.post("/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


async def actions_for(db: Any, user_id: Any) -> list[str]:
    rows = await (
        await db.execute(
            "SELECT action FROM security_events WHERE target_user_id = %s ORDER BY id", (user_id,)
        )
    ).fetchall()
    return [row["action"] for row in rows]


def token_of(link: str) -> str:
    return link.rsplit("token=", 1)[1]


async def test_the_first_administrator_is_set_up_once_with_the_token(
    no_admin: None, browser: httpx.AsyncClient, api: Api, db: Any, make_user: UserFactory
) -> None:
    assert (await browser.get("/auth/config")).json()["setup_required"] is True
    token = await accounts.issue_token(db, kind="setup", hours=24)
    email = f"head-{time.time_ns()}@school.example"
    body = {"token": token, "email": email, "password": PASSWORD, "display_name": "Head"}

    wrong = await browser.post("/auth/setup", json={**body, "token": "not-the-token-at-all-0000"})
    assert wrong.status_code == 410 and "wrong, used or expired" in wrong.json()["detail"]
    weak = await browser.post("/auth/setup", json={**body, "password": "aaaaaaaaaaaa"})
    assert weak.status_code == 422 and "common" in weak.json()["detail"]
    foreign = await browser.post("/auth/setup", json=body, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403

    created = await browser.post("/auth/setup", json=body)  # the weak try did not spend the token
    assert created.status_code == 201, created.text
    session = created.json()
    assert session["user"]["is_admin"] is True and session["user"]["display_name"] == "Head"
    assert "studyai_session" in browser.cookies
    listed = await browser.get("/admin/users", params={"q": email})
    assert listed.status_code == 200 and [row["email"] for row in listed.json()] == [email]
    assert (await browser.get("/auth/config")).json()["setup_required"] is False
    assert await actions_for(db, session["user"]["id"]) == [
        "user.created",
        "user.admin_granted",
        "session.created",
    ]

    again = await browser.post("/auth/setup", json=body)
    assert (
        again.status_code == 410
        and again.json()["detail"] == "This server already has an administrator: sign in."
    )
    fresh = await accounts.issue_token(db, kind="setup", hours=24)
    second = await browser.post("/auth/setup", json={**body, "token": fresh, "email": "x-" + email})
    assert second.status_code == 410 and "already has an administrator" in second.json()["detail"]

    student = await make_user("student")
    for path in ("/admin/users", "/admin/audit"):
        assert (await api.http.get(path, headers=student)).status_code == 403
    refused = await api.http.post(f"/admin/users/{student.id}/disable", headers=student)
    assert refused.status_code == 403


async def test_set_up_with_an_existing_email_makes_that_account_the_administrator(
    no_admin: None,
    browser: httpx.AsyncClient,
    other_browser: httpx.AsyncClient,
    db: Any,
    make_user: UserFactory,
) -> None:
    teacher = await with_password(db, await make_user("teacher"))
    await sign_in(other_browser, teacher.email)
    token = await accounts.issue_token(db, kind="setup", hours=24)
    body = {"token": token, "email": teacher.email.upper(), "password": NEW_PASSWORD}
    created = await browser.post("/auth/setup", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["user"]["id"] == str(teacher.id) and created.json()["user"]["is_admin"] is True
    assert (await other_browser.get("/auth/session")).status_code == 401  # the old password's session ended
    login = await other_browser.post("/auth/login", json={"email": teacher.email, "password": PASSWORD})
    assert login.status_code == 401
    await sign_in(other_browser, teacher.email, NEW_PASSWORD)
    assert "user.admin_granted" in await actions_for(db, teacher.id)


async def test_an_administrator_disables_an_account_at_once_and_enables_it(
    browser: httpx.AsyncClient, api: Api, db: Any, make_user: UserFactory
) -> None:
    admin = await admin_user(db, make_user)
    target = await with_password(db, await make_user("target"))
    await sign_in(browser, target.email)
    assert (await browser.get("/projects")).status_code == 200

    listed = await api.http.get(
        "/admin/users", params={"q": target.email.split("@")[0], "limit": 5}, headers=admin
    )
    assert listed.status_code == 200
    [row] = listed.json()
    assert row["id"] == str(target.id) and row["disabled_at"] is None and row["has_password"] is True

    disabled = await api.http.post(f"/admin/users/{target.id}/disable", headers=admin)
    assert disabled.status_code == 200 and disabled.json()["disabled_at"] is not None
    assert (await browser.get("/projects")).status_code == 401
    assert (await api.http.get("/projects", headers=target)).status_code == 401

    enabled = await api.http.post(f"/admin/users/{target.id}/enable", headers=admin)
    assert enabled.status_code == 200 and enabled.json()["disabled_at"] is None
    # Enabling revives nothing the account had: its old session and key stay ended; it signs in anew.
    assert (await browser.get("/projects")).status_code == 401
    assert (await api.http.get("/projects", headers=target)).status_code == 401
    await sign_in(browser, target.email)
    assert (await browser.get("/projects")).status_code == 200

    itself = await api.http.post(f"/admin/users/{admin.id}/disable", headers=admin)
    assert itself.status_code == 409
    unknown = await api.http.post("/admin/users/00000000-0000-0000-0000-000000000000/disable", headers=admin)
    assert unknown.status_code == 404

    audit = (await api.http.get("/admin/audit", params={"limit": 10}, headers=admin)).json()
    mine = [event for event in audit if event["target_user_id"] == str(target.id)]
    assert [event["action"] for event in mine][1:4] == [
        "user.enabled",
        "credentials.revoked",
        "user.disabled",
    ]
    assert mine[2]["details"] == {"reason": "disabled", "sessions": 1, "keys": 1}
    assert all(event["actor_email"] == admin.email for event in mine[1:4])
    assert [event["id"] for event in audit] == sorted((event["id"] for event in audit), reverse=True)


async def test_a_reset_link_works_once_and_ends_every_session(
    browser: httpx.AsyncClient, other_browser: httpx.AsyncClient, api: Api, db: Any, make_user: UserFactory
) -> None:
    admin = await admin_user(db, make_user)
    target = await with_password(db, await make_user("forgetful"))
    await sign_in(other_browser, target.email)
    first = await api.http.post(f"/admin/users/{target.id}/reset-link", headers=admin)
    issued = await api.http.post(f"/admin/users/{target.id}/reset-link", headers=admin)
    assert issued.status_code == 200, issued.text
    out = issued.json()
    assert out["link"].startswith("http://studyai.test/app/#/reset?token=") and out["mailed"] is False
    token = token_of(out["link"])
    earlier = {"token": token_of(first.json()["link"])}
    assert (await browser.post("/auth/reset/check", json=earlier)).json() == {"valid": False}
    assert (await browser.post("/auth/reset/check", json={"token": token})).json() == {"valid": True}
    assert (await api.http.get("/projects", headers=target)).status_code == 200

    weak = await browser.post("/auth/reset", json={"token": token, "password": "short"})
    assert weak.status_code == 422
    reset = await browser.post("/auth/reset", json={"token": token, "password": NEW_PASSWORD})
    assert reset.status_code == 200, reset.text
    assert reset.json()["user"]["id"] == str(target.id) and "studyai_session" in browser.cookies
    assert (await browser.get("/auth/session")).status_code == 200
    assert (await other_browser.get("/auth/session")).status_code == 401  # signed out everywhere else
    assert (await api.http.get("/projects", headers=target)).status_code == 401  # and every key ended

    again = await browser.post("/auth/reset", json={"token": token, "password": NEW_PASSWORD + "!"})
    assert again.status_code == 410
    assert again.json()["detail"] == "This reset link is no longer valid: ask for a new one."
    assert (await browser.post("/auth/reset/check", json={"token": token})).json() == {"valid": False}
    old = await other_browser.post("/auth/login", json={"email": target.email, "password": PASSWORD})
    assert old.status_code == 401
    await sign_in(other_browser, target.email, NEW_PASSWORD)
    actions = await actions_for(db, target.id)
    assert "password.reset_issued" in actions and "password.reset_used" in actions


async def test_no_project_owner_can_make_a_reset_link(api: Api, db: Any, make_user: UserFactory) -> None:
    """A reset link reaches only the account's own mailbox or an administrator: an owner's route to make
    one for a member is gone (404 for every member and caller), and the administrators' route is refused
    to an owner (403)."""
    owner = await make_user("owner")
    project_id = await create_project(api.http, owner, name="Physics")
    student = await with_password(db, await make_user("student"))
    editor = await make_user("editor")
    for member, role in ((student, "viewer"), (editor, "editor")):
        await add_member(api.http, owner, project_id, member, role)
    for member in (student, editor, owner):
        for caller in (owner, editor, student):
            made = await api.http.post(
                f"/projects/{project_id}/members/{member.id}/reset-link", headers=caller
            )
            assert made.status_code in (404, 405), made.text
            assert "link" not in made.text
    admins_only = await api.http.post(f"/admin/users/{student.id}/reset-link", headers=owner)
    assert admins_only.status_code == 403
    assert "password.reset_issued" not in await actions_for(db, student.id)

"""What a school's deployment settings change, in-process: with an https PUBLIC_URL the session cookie is
`__Host-` and Secure even when the proxy hands the request over as http, and every answer carries HSTS;
PROJECT_CREATORS=teachers leaves students without a way to create projects; mail goes out only with
PUBLIC_URL set (never built from the request's Host) and within each account's daily budget."""

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from core.accounts.passwords import hash_password
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts
from tests.conftest import UserFactory, create_project, own_app
from tests.mail_server import smtp_server

PASSWORD = "correct horse battery staple 42"
HTTPS = "https://study.school.example"


@asynccontextmanager
async def app_with(
    settings: Settings, services: ServiceUrls, **values: Any
) -> AsyncIterator[httpx.AsyncClient]:
    async with own_app(settings.with_values(values), services, timeout=60) as (_, http):
        yield http


async def test_an_https_public_url_makes_the_cookie_host_only_and_secure_and_adds_hsts(
    settings: Settings, services: ServiceUrls, db: Any
) -> None:
    email = f"hsts-{time.time_ns()}@school.example"
    await accounts.create_account(db, email=email, password_hash=hash_password(PASSWORD))
    async with app_with(settings, services, PUBLIC_URL=HTTPS) as http:  # the proxy speaks http to us
        signed = await http.post(
            "/auth/login", json={"email": email, "password": PASSWORD}, headers={"Origin": HTTPS}
        )
        assert signed.status_code == 200, signed.text
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith("__Host-studyai_session=") and "Secure" in cookie and "Path=/" in cookie
        assert "domain" not in cookie.lower()
        for response in (signed, await http.get("/health"), await http.get("/projects")):
            assert response.headers["strict-transport-security"] == "max-age=31536000"
        # A cookie of the plain name is not a session there: a sibling host cannot plant one.
        token = cookie.split(";", 1)[0].split("=", 1)[1]
        http.cookies.clear()
        http.cookies.set("studyai_session", token)
        assert (await http.get("/auth/session")).status_code == 401
    async with app_with(settings, services, PUBLIC_URL="http://study.school.example") as http:
        assert "strict-transport-security" not in (await http.get("/health")).headers


async def test_a_school_lets_only_teachers_and_administrators_create_projects(
    settings: Settings, services: ServiceUrls, db: Any, make_user: UserFactory
) -> None:
    student, teacher, admin = await make_user("student"), await make_user("teacher"), await make_user("admin")
    await accounts.set_teacher(db, user_id=teacher.id, teacher=True)
    await accounts.set_admin(db, user_id=admin.id)
    async with app_with(settings, services, PROJECT_CREATORS="teachers") as http:
        refused = await http.post("/projects", json={"name": "mine"}, headers=student)
        assert refused.status_code == 403 and "teachers" in refused.json()["detail"]
        assert (await http.get("/auth/session", headers=student)).json()["user"][
            "can_create_projects"
        ] is False
        for allowed in (teacher, admin):
            assert (await http.post("/projects", json={"name": "course"}, headers=allowed)).status_code == 201
        config = (await http.get("/auth/config")).json()
        assert config["project_creators"] == "teachers"
        marked = await http.patch(f"/admin/users/{student.id}", json={"is_teacher": True}, headers=admin)
        assert marked.status_code == 200 and marked.json()["is_teacher"] is True
        assert (await http.post("/projects", json={"name": "now"}, headers=student)).status_code == 201
        assert (
            await http.patch(f"/admin/users/{student.id}", json={"is_teacher": False}, headers=teacher)
        ).status_code == 403


async def test_mail_needs_public_url_and_stays_within_each_accounts_daily_budget(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    owner = await make_user("mailer")
    with smtp_server() as (inbox, port):
        smtp = {"SMTP_HOST": "127.0.0.1", "SMTP_PORT": port, "SMTP_SECURITY": "none"}
        async with app_with(settings, services, **smtp) as http:  # no PUBLIC_URL: links would use Host
            project_id = await create_project(http, owner)
            invited = await http.post(
                f"/projects/{project_id}/members",
                json={"email": f"x-{time.time_ns()}@school.example"},
                headers={**owner, "Host": "evil.example"},
            )
            assert invited.status_code == 202 and invited.json()["mailed"] is False
            assert (await http.get("/auth/config")).json()["mail_enabled"] is False
            assert (await http.post("/auth/forgot", json={"email": owner.email})).status_code == 409
        async with app_with(settings, services, **smtp, PUBLIC_URL=HTTPS, MAIL_PER_USER_DAY=3) as http:
            code = (await http.post(f"/projects/{project_id}/invitations", json={}, headers=owner)).json()
            path = f"/projects/{project_id}/invitations/{code['id']}/email"
            emails = [f"p{n}-{time.time_ns()}@school.example" for n in range(3)]
            assert (await http.post(path, json={"emails": emails[:2]}, headers=owner)).json() == {"sent": 2}
            over = await http.post(path, json={"emails": emails[1:]}, headers=owner)
            assert over.status_code == 409 and "limit is 3 a day" in over.json()["detail"]
            one_more = await http.post(
                f"/projects/{project_id}/members", json={"email": emails[2]}, headers=owner
            )
            assert one_more.status_code == 202 and one_more.json()["mailed"] is True
            refused = await http.post(
                f"/projects/{project_id}/members", json={"email": emails[0]}, headers=owner
            )
            assert refused.status_code == 409
    assert not any("evil.example" in message.get_content() for _, message in inbox.messages)
    assert all(HTTPS in message.get_content() for _, message in inbox.messages)

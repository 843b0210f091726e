"""Invitations over HTTP: owners create, list and revoke codes and links; people join with a key, with a
cookie session, or by creating their account with the code; expired, revoked and used-up codes are
refused; concurrent joins never pass max_uses; a join never lowers a role; owners see it in the audit.
Rate limits are off in this module's app (the guessing limits: test_invitation_limits.py)."""

import asyncio
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from core.accounts import codes
from core.accounts.passwords import hash_password
from core.store.accounts import accounts
from tests.backend.conftest import Api
from tests.conftest import Caller, UserFactory, class_project, create_project

PASSWORD = "correct horse battery staple 42"
DISPLAY = re.compile(r"^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$")


async def invite(http: httpx.AsyncClient, owner: Caller, project_id: str, **body: Any) -> dict[str, Any]:
    response = await http.post(f"/projects/{project_id}/invitations", json=body, headers=owner)
    assert response.status_code == 201, response.text
    return response.json()


async def member_role(db: Any, project_id: str, user_id: Any) -> str | None:
    cur = await db.execute(
        "SELECT role FROM project_members WHERE project_id = %s AND user_id = %s", (project_id, user_id)
    )
    row = await cur.fetchone()
    return row["role"] if row else None


async def uses(db: Any, invitation_id: str) -> int:
    cur = await db.execute("SELECT uses FROM invitations WHERE id = %s", (invitation_id,))
    return (await cur.fetchone())["uses"]


@pytest.fixture
async def browser(api: Api) -> Any:
    """A client of its own (its own cookie jar) on the module's app."""
    async with api.browser() as http:
        yield http


async def test_an_owner_creates_a_code_and_a_link(api: Api, make_user: UserFactory) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Physics 10B")
    made = await invite(api.http, owner, project_id)
    assert DISPLAY.match(made["code"]), made["code"]  # 10 of 32 letters: 50 bits
    assert made["link"] == f"http://studyai.test/app/#/join/{made['code']}"
    assert (made["role"], made["max_uses"], made["uses"], made["revoked_at"]) == ("viewer", 100, 0, None)
    expires = datetime.fromisoformat(made["expires_at"])
    assert abs(expires - (datetime.now(UTC) + timedelta(hours=168))) < timedelta(minutes=5)
    other = await invite(api.http, owner, project_id, role="editor", expires_in_hours=2, max_uses=3)
    assert (other["role"], other["max_uses"]) == ("editor", 3) and other["code"] != made["code"]
    assert datetime.fromisoformat(other["expires_at"]) < datetime.now(UTC) + timedelta(hours=2, minutes=5)
    listed = (await api.http.get(f"/projects/{project_id}/invitations", headers=owner)).json()
    assert [row["id"] for row in listed] == [other["id"], made["id"]]
    assert listed[1]["code"] == made["code"] and listed[1]["link"] == made["link"]
    audit = (await api.http.get(f"/projects/{project_id}/audit", headers=owner)).json()
    created = [e for e in audit if e["action"] == "invitation.created"]
    assert {e["target_id"] for e in created} == {made["id"], other["id"]}
    assert all(made["code"].replace("-", "") not in str(e) for e in audit)  # the code is not logged


async def test_bad_invitation_settings_are_refused(api: Api, make_user: UserFactory) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner)
    for body in (
        {"max_uses": 0},
        {"max_uses": 10001},
        {"expires_in_hours": 0},
        {"expires_in_hours": 8761},
        {"role": "admin"},
        {"code": "ABCDE-FGHJK"},
    ):
        response = await api.http.post(f"/projects/{project_id}/invitations", json=body, headers=owner)
        assert response.status_code == 422, (body, response.text)


async def test_only_owners_create_list_and_revoke(api: Api, make_user: UserFactory) -> None:
    project_id, owner, editor, alice, _ = await class_project(api.http, make_user, "Owners only")
    outsider = await make_user("outsider")
    made = await invite(api.http, owner, project_id)
    base = f"/projects/{project_id}/invitations"
    for caller, expected in ((editor, 403), (alice, 403), (outsider, 404)):
        assert (await api.http.post(base, json={}, headers=caller)).status_code == expected
        assert (await api.http.get(base, headers=caller)).status_code == expected
        assert (await api.http.delete(f"{base}/{made['id']}", headers=caller)).status_code == expected
    assert (await api.http.delete(f"{base}/{made['id']}", headers=owner)).status_code == 204


async def test_a_key_user_joins_once_and_again_spends_nothing(
    api: Api, db: Any, make_user: UserFactory
) -> None:
    owner, student = await make_user("teacher"), await make_user("student")
    project_id = await create_project(api.http, owner, name="Chemistry")
    made = await invite(api.http, owner, project_id)
    assert (await api.http.get(f"/projects/{project_id}", headers=student)).status_code == 404
    preview = await api.http.get(f"/join/{made['code']}")
    assert preview.status_code == 200, preview.text
    assert preview.json() == {
        "project_name": "Chemistry",
        "role": "viewer",
        "expires_at": made["expires_at"],
        "project_language": "auto",
    }
    joined = await api.http.post("/join", json={"code": made["code"].lower()}, headers=student)
    assert joined.status_code == 200, joined.text
    assert joined.json() == {
        "project_id": project_id,
        "role": "viewer",
        "project_name": "Chemistry",
        "outcome": "joined",
    }
    assert (await api.http.get(f"/projects/{project_id}", headers=student)).status_code == 200
    again = await api.http.post("/join", json={"code": made["code"]}, headers=student)
    assert again.status_code == 200 and again.json()["role"] == "viewer"
    assert again.json()["outcome"] == "member"  # nothing changed: the app shows no welcome
    assert await uses(db, made["id"]) == 1


async def test_codes_are_read_case_insensitively_and_o_as_zero(
    api: Api, db: Any, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Typed codes")
    made = await invite(api.http, owner, project_id)
    code = "01" + codes.new_code()[2:]  # a 0 and a 1 to mistype as O and l
    await db.execute("UPDATE invitations SET code = %s WHERE id = %s", (code, made["id"]))
    shown = codes.display(code)
    typed = [shown.lower(), code.lower(), " " + shown + " ", "ol" + code[2:].lower(), "OI" + code[2:]]
    for variant in typed:
        assert (await api.http.get(f"/join/{variant}")).status_code == 200, variant
    students = [await make_user("student") for _ in typed]
    for student, variant in zip(students, typed, strict=True):
        response = await api.http.post("/join", json={"code": variant}, headers=student)
        assert response.status_code == 200, (variant, response.text)
    assert await uses(db, made["id"]) == len(typed)
    for wrong in ("", "x", code[:9], code + "0", "U" + code[1:]):
        response = await api.http.post("/join", json={"code": wrong or " "}, headers=owner)
        assert (
            response.status_code == 404
            and response.json()["detail"] == "No such invitation, or it has expired."
        )


async def test_a_join_never_lowers_a_role_and_can_raise_one(
    api: Api, db: Any, make_user: UserFactory
) -> None:
    project_id, owner, editor, alice, _ = await class_project(api.http, make_user, "Roles")
    viewers = await invite(api.http, owner, project_id)
    for caller, role in ((owner, "owner"), (editor, "editor"), (alice, "viewer")):
        response = await api.http.post("/join", json={"code": viewers["code"]}, headers=caller)
        assert response.status_code == 200 and response.json()["role"] == role
        assert await member_role(db, project_id, caller.id) == role
    assert await uses(db, viewers["id"]) == 0  # members already: no use spent
    editors = await invite(api.http, owner, project_id, role="editor")
    promoted = await api.http.post("/join", json={"code": editors["code"]}, headers=alice)
    assert promoted.json()["role"] == "editor" and await member_role(db, project_id, alice.id) == "editor"
    assert await uses(db, editors["id"]) == 1
    audit = (await api.http.get(f"/projects/{project_id}/audit", headers=owner)).json()
    joined = [e for e in audit if e["action"] == "member.joined"]
    assert [e["details"] for e in joined] == [
        {"role": "editor", "invitation_id": editors["id"], "previous_role": "viewer"}
    ]


async def test_a_cookie_session_joins_with_its_csrf_token(
    api: Api, browser: httpx.AsyncClient, db: Any, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Biology")
    made = await invite(api.http, owner, project_id)
    email = f"pupil-{time.time_ns()}@school.example"
    assert await accounts.create_account(db, email=email, password_hash=hash_password(PASSWORD))
    login = await browser.post("/auth/login", json={"email": email, "password": PASSWORD})
    csrf = {"X-CSRF-Token": login.json()["csrf_token"]}
    assert (await browser.post("/join", json={"code": made["code"]})).status_code == 403
    foreign = await browser.post(
        "/join", json={"code": made["code"]}, headers={**csrf, "Origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    joined = await browser.post("/join", json={"code": made["code"]}, headers=csrf)
    assert joined.status_code == 200, joined.text
    assert (await browser.get(f"/projects/{project_id}")).status_code == 200
    assert (await api.http.post("/join", json={"code": made["code"]})).status_code == 401  # nobody


async def test_joining_with_a_new_account_signs_in(
    api: Api, browser: httpx.AsyncClient, db: Any, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="History")
    made = await invite(api.http, owner, project_id, max_uses=5)
    assert api.app.state.runtime.settings.accounts.signup_enabled is False  # the code is the permission
    email = f"new-{time.time_ns()}@school.example"
    body = {"code": made["code"].lower(), "email": email, "password": PASSWORD, "display_name": "Ana"}
    weak = await browser.post("/join/signup", json={**body, "password": "password123"})
    assert weak.status_code == 422 and "common" in weak.json()["detail"]
    wrong = await browser.post("/join/signup", json={**body, "code": "ZZZZZ-ZZZZZ"})
    assert wrong.status_code == 404
    cross = await browser.post("/join/signup", json=body, headers={"Origin": "https://evil.example"})
    assert cross.status_code == 403
    assert await accounts.account_by_email(db, email=email) is None  # none of those made an account
    created = await browser.post("/join/signup", json=body)
    assert created.status_code == 201, created.text
    out = created.json()
    assert (out["project_id"], out["role"], out["project_name"]) == (project_id, "viewer", "History")
    assert out["session"]["user"]["email"] == email and out["session"]["user"]["display_name"] == "Ana"
    assert "httponly" in created.headers["set-cookie"].lower()
    assert (await browser.get(f"/projects/{project_id}")).status_code == 200
    session = (await browser.get("/auth/session")).json()
    assert session["csrf_token"] == out["session"]["csrf_token"]
    cur = await db.execute("SELECT via FROM browser_sessions WHERE id = %s", (out["session"]["session_id"],))
    assert (await cur.fetchone())["via"] == "signup"
    taken = await api.http.post("/join/signup", json={**body, "email": email.upper()})
    assert taken.status_code == 409
    assert taken.json()["detail"] == "An account with this email exists: sign in, then join with the code."
    assert await uses(db, made["id"]) == 1


async def test_expired_revoked_and_used_up_codes_are_refused(
    api: Api, db: Any, make_user: UserFactory
) -> None:
    owner, student = await make_user("teacher"), await make_user("student")
    project_id = await create_project(api.http, owner, name="Refusals")
    expired, revoked, single = [await invite(api.http, owner, project_id, max_uses=1) for _ in range(3)]
    await db.execute(
        "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = %s", (expired["id"],)
    )
    base = f"/projects/{project_id}/invitations"
    assert (await api.http.delete(f"{base}/{revoked['id']}", headers=owner)).status_code == 204
    assert (await api.http.delete(f"{base}/{revoked['id']}", headers=owner)).status_code == 404
    for gone in (expired, revoked):
        assert (await api.http.get(f"/join/{gone['code']}")).status_code == 404
        response = await api.http.post("/join", json={"code": gone["code"]}, headers=student)
        assert (
            response.status_code == 404
            and response.json()["detail"] == "No such invitation, or it has expired."
        )
    assert (await api.http.post("/join", json={"code": single["code"]}, headers=owner)).json()[
        "role"
    ] == "owner"
    first = await make_user("first")
    assert (await api.http.post("/join", json={"code": single["code"]}, headers=first)).status_code == 200
    used_up = await api.http.post("/join", json={"code": single["code"]}, headers=student)
    assert used_up.status_code == 410 and "used" in used_up.json()["detail"]
    assert (await api.http.get(f"/join/{single['code']}")).status_code == 410
    assert await member_role(db, project_id, student.id) is None
    listed = {row["id"]: row for row in (await api.http.get(base, headers=owner)).json()}
    assert listed[revoked["id"]]["revoked_at"] is not None and listed[single["id"]]["uses"] == 1
    audit = (await api.http.get(f"/projects/{project_id}/audit", headers=owner)).json()
    assert [e["target_id"] for e in audit if e["action"] == "invitation.revoked"] == [revoked["id"]]


@pytest.mark.parametrize("max_uses", [30, 5])
async def test_concurrent_joins_never_pass_max_uses(
    api: Api, db: Any, make_user: UserFactory, max_uses: int
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Crowd")
    made = await invite(api.http, owner, project_id, max_uses=max_uses)
    students = [await make_user("crowd") for _ in range(30)]
    answers = await asyncio.gather(
        *(api.http.post("/join", json={"code": made["code"]}, headers=s) for s in students)
    )
    statuses = sorted(response.status_code for response in answers)
    assert statuses == [200] * max_uses + [410] * (30 - max_uses), [
        r.text for r in answers if r.status_code >= 500
    ]
    assert await uses(db, made["id"]) == max_uses
    cur = await db.execute(
        "SELECT count(*) AS n FROM project_members WHERE project_id = %s AND role = 'viewer'", (project_id,)
    )
    assert (await cur.fetchone())["n"] == max_uses


async def test_owners_see_who_joined_in_the_audit(api: Api, make_user: UserFactory) -> None:
    owner, student = await make_user("teacher"), await make_user("student")
    project_id = await create_project(api.http, owner, name="Audited")
    made = await invite(api.http, owner, project_id, role="editor")
    assert (await api.http.post("/join", json={"code": made["code"]}, headers=student)).status_code == 200
    audit = (await api.http.get(f"/projects/{project_id}/audit", headers=owner)).json()
    joined = [e for e in audit if e["action"] == "member.joined"]
    assert len(joined) == 1
    event = joined[0]
    assert event["project_id"] == project_id and event["actor_user_id"] == str(student.id)
    assert event["actor_email"] == student.email
    assert event["details"] == {"role": "editor", "invitation_id": made["id"]}


async def test_without_rate_limits_wrong_codes_are_only_404(api: Api) -> None:
    assert api.app.state.api_resources.rate_limiter is None
    for n in range(25):
        assert (await api.http.get(f"/join/WRONG-{n:05d}")).status_code == 404

"""LTI 1.3 launches over HTTP with a platform simulated here: its own RSA key, its key set served by a
real HTTP server on a local port. The whole flow (login initiation, the redirect to the platform, its
signed ID token posted to the launch, the page's one-time ticket, the app's session) and each refusal."""

import asyncio
import hashlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import psycopg
import pytest
from joserfc.jwk import RSAKey

from backend.accounts.lti.router import own_path
from core.runtime.services import ServiceUrls
from core.store.accounts import accounts, auth_flows
from core.store.accounts.auth_flows import AuthFlow
from tests.backend.conftest import Api
from tests.conftest import Caller, UserFactory, studyai
from tests.lti_platform import CLAIM, LEARNER, launch_token, platform_key, platform_server

APP = "http://studyai.test"


@dataclass
class KeyServer:
    """The platform's JWKS endpoint: a real HTTP server in a thread, serving whatever `jwks` holds."""

    url: str
    jwks: dict[str, Any]


@pytest.fixture(scope="module")
def signing_key() -> RSAKey:
    return platform_key()


@pytest.fixture(scope="module")
def key_server(signing_key: RSAKey) -> Iterator[KeyServer]:
    served = KeyServer(url="", jwks={"keys": [signing_key.as_dict(private=False)]})
    with platform_server(lambda: served.jwks) as base:
        served.url = f"{base}/jwks"
        yield served


@dataclass
class Lms:
    """One registered platform, as the tests play it."""

    id: str
    issuer: str
    client_id: str
    auth_login_url: str
    key: RSAKey
    deployment: str = "deployment-1"

    def token(self, nonce: str, /, *, signing_key: RSAKey | None = None, **claims: Any) -> str:
        """A signed ID token for this nonce, with these claims changed (None: left out)."""
        presentation = {"return_url": "https://school.lms.example/course/1"}
        return launch_token(
            signing_key or self.key,
            issuer=self.issuer,
            client_id=self.client_id,
            nonce=nonce,
            tool=APP,
            deployment=self.deployment,
            claims={CLAIM + "launch_presentation": presentation} | claims,
        )


@pytest.fixture
async def admin(make_user: UserFactory, db: psycopg.AsyncConnection[dict[str, Any]]) -> Caller:
    caller = await make_user("admin")
    await accounts.set_admin(db, user_id=caller.id)
    return caller


@pytest.fixture
async def lms(api: Api, admin: Caller, key_server: KeyServer, signing_key: RSAKey) -> Lms:
    issuer = f"https://lms-{time.time_ns()}.example"
    body = {
        "name": "School Moodle",
        "issuer": issuer,
        "client_id": "studyai-client",
        "auth_login_url": f"{issuer}/mod/lti/auth.php?x=1",
        "jwks_url": key_server.url,
        "deployment_ids": ["deployment-1", "deployment-2"],
    }
    response = await api.http.post("/admin/lti/platforms", json=body, headers=admin)
    assert response.status_code == 201, response.text
    return Lms(response.json()["id"], issuer, "studyai-client", body["auth_login_url"], signing_key)


Browser = Callable[[], Awaitable[httpx.AsyncClient]]


@pytest.fixture
async def browser(api: Api) -> AsyncIterator[Browser]:
    """Browsers of their own (each its own cookie jar) on the module's app."""
    opened: list[httpx.AsyncClient] = []

    async def new() -> httpx.AsyncClient:
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=api.app), base_url=APP)
        opened.append(client)
        return client

    yield new
    for client in opened:
        await client.aclose()


async def login(http: httpx.AsyncClient, lms: Lms, **given: str) -> dict[str, str]:
    """The platform's login initiation (a form post); the parameters of our redirect to it."""
    form = {
        "iss": lms.issuer,
        "login_hint": "hint-42",
        "target_link_uri": f"{APP}/lti/launch",
        "lti_message_hint": "message-7",
        "client_id": lms.client_id,
        "lti_deployment_id": lms.deployment,
    } | given
    response = await http.post("/lti/login", data=form, headers={"Origin": "https://school.lms.example"})
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == lms.auth_login_url.split("?")[0]
    params = {key: values[0] for key, values in parse_qs(location.query).items()}
    assert params["x"] == "1"  # the platform's own query is kept
    return params


async def post_launch(http: httpx.AsyncClient, id_token: str, state: str) -> httpx.Response:
    return await http.post(
        "/lti/launch",
        data={"id_token": id_token, "state": state},
        headers={"Origin": "https://school.lms.example"},
    )


def ticket_path(page: httpx.Response) -> str:
    assert page.status_code == 200, page.text
    found = re.search(r'href="http://studyai\.test(/auth/ticket/[A-Za-z0-9_-]+)"', page.text)
    assert found, page.text
    return found.group(1)


async def open_ticket(http: httpx.AsyncClient, path: str) -> httpx.Response:
    """The ticket's "Continue as …" page, then its Continue button: the browser is signed in only by the
    click (a same-origin form post), never by opening the link."""
    page = await http.get(path)
    assert page.status_code == 200 and "Continue as" in page.text, page.text
    assert (await http.get("/auth/session")).status_code == 401  # nothing changed before the click
    found = re.search(r'name=ticket value="([A-Za-z0-9_-]+)"', page.text)
    assert found, page.text
    return await http.post("/auth/ticket", data={"ticket": found.group(1)}, headers={"Origin": APP})


async def launch(http: httpx.AsyncClient, lms: Lms, **claims: Any) -> tuple[str, dict[str, Any]]:
    """A full launch in this browser: login, token, launch page, ticket, Continue; (project id, session)."""
    params = await login(http, lms)
    page = await post_launch(http, lms.token(params["nonce"], **claims), params["state"])
    opened = await open_ticket(http, ticket_path(page))
    assert opened.status_code == 303, opened.text
    project_id = opened.headers["location"].removeprefix("/app/#/projects/")
    session = await http.get("/auth/session")
    assert session.status_code == 200, session.text
    return project_id, session.json()


async def test_an_instructor_opens_the_course_and_a_learner_joins_it(
    browser: Browser, lms: Lms, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    teacher = await browser()
    params = await login(teacher, lms)
    assert params["scope"] == "openid" and params["response_type"] == "id_token"
    assert params["response_mode"] == "form_post" and params["prompt"] == "none"
    assert params["client_id"] == lms.client_id and params["redirect_uri"] == f"{APP}/lti/launch"
    assert params["login_hint"] == "hint-42" and params["lti_message_hint"] == "message-7"
    assert len(params["state"]) >= 40 and len(params["nonce"]) >= 40
    page = await post_launch(teacher, lms.token(params["nonce"], email="ada@school.example"), params["state"])
    policy = page.headers["content-security-policy"]
    assert f"frame-ancestors {lms.issuer}" in policy and "https://school.lms.example" in policy
    assert "studyai_session" not in teacher.cookies  # the frame is not signed in: the new window is
    assert "Analytical Engines 101" in page.text and "window.top === window" in page.text
    opened = await open_ticket(teacher, ticket_path(page))
    assert opened.status_code == 303 and opened.headers["location"].startswith("/app/#/projects/")
    assert "samesite=lax" in opened.headers["set-cookie"].lower()
    project_id = opened.headers["location"].removeprefix("/app/#/projects/")
    session = (await teacher.get("/auth/session")).json()
    assert session["user"]["email"] == "ada@school.example"
    assert session["user"]["display_name"] == "Ada Lovelace"
    project = (await teacher.get(f"/projects/{project_id}")).json()
    assert project["name"] == "Analytical Engines 101" and project["role"] == "owner"

    student = await browser()
    learner_project, learner = await launch(
        student, lms, sub="person-2", name="Bo", **{CLAIM + "roles": [LEARNER]}
    )
    assert learner_project == project_id and learner["user"]["id"] != session["user"]["id"]
    assert learner["user"]["email"].endswith("@lti.invalid")  # no email claim: a synthetic address
    assert (await student.get(f"/projects/{project_id}")).json()["role"] == "viewer"
    members = (await teacher.get(f"/projects/{project_id}/members")).json()
    roles = {member["user_id"]: member["role"] for member in members["members"]}
    assert roles == {session["user"]["id"]: "owner", learner["user"]["id"]: "viewer"}

    again, _ = await launch(await browser(), lms)  # the instructor again: the same project, still owner
    assert again == project_id
    events = await (
        await db.execute(
            "SELECT action, details FROM security_events WHERE project_id = %s ORDER BY id", (project_id,)
        )
    ).fetchall()
    launches = [event["details"] for event in events if event["action"] == "lti.launch"]
    assert [event["role"] for event in launches] == ["owner", "viewer", "owner"]
    assert launches[0]["context_id"] == "course-1" and launches[1]["roles"] == ["Learner"]
    linked = await (
        await db.execute(
            "SELECT count(*) AS n FROM security_events WHERE action IN ('identity.linked', 'user.created')"
            " AND target_user_id = %s",
            (learner["user"]["id"],),
        )
    ).fetchone()
    assert linked["n"] == 2


async def test_a_learner_never_lowers_an_instructors_role(browser: Browser, lms: Lms) -> None:
    project_id, _ = await launch(await browser(), lms)
    http = await browser()
    same_project, _ = await launch(http, lms, **{CLAIM + "roles": [LEARNER]})  # the same person, as Learner
    assert same_project == project_id
    assert (await http.get(f"/projects/{project_id}")).json()["role"] == "owner"


async def test_a_learner_before_any_instructor_gets_a_page_saying_so(browser: Browser, lms: Lms) -> None:
    http = await browser()
    params = await login(http, lms)
    token = lms.token(
        params["nonce"], sub="early", **{CLAIM + "roles": [LEARNER], CLAIM + "context": {"id": "c9"}}
    )
    page = await post_launch(http, token, params["state"])
    assert page.status_code == 403
    assert "Your teacher has not opened studyAI in this course yet." in page.text


async def test_an_email_of_an_existing_account_is_not_linked(
    browser: Browser, lms: Lms, make_user: UserFactory
) -> None:
    someone = await make_user("someone")
    _, session = await launch(await browser(), lms, sub="claims-that-email", email=someone.email)
    assert session["user"]["id"] != str(someone.id)
    assert session["user"]["email"].startswith("lti-") and session["user"]["email"].endswith("@lti.invalid")


async def refused(http: httpx.AsyncClient, lms: Lms, reason: str, **claims: Any) -> None:
    params = await login(http, lms)
    page = await post_launch(http, lms.token(params["nonce"], **claims), params["state"])
    assert page.status_code == 400 and reason in page.text, page.text
    assert "/auth/ticket/" not in page.text


async def test_launches_that_are_refused(browser: Browser, lms: Lms) -> None:
    http = await browser()
    await refused(http, lms, "unknown deployment", **{CLAIM + "deployment_id": "deployment-9"})
    await refused(http, lms, "audience", aud="another-tool")
    await refused(http, lms, "azp", aud=[lms.client_id, "another-tool"])
    await refused(http, lms, "expired", exp=int(time.time()) - 600, iat=int(time.time()) - 900)
    stranger = RSAKey.generate_key(2048, parameters={"kid": "platform-1"})
    await refused(http, lms, "bad signature", signing_key=stranger)
    other_kid = RSAKey.generate_key(2048, parameters={"kid": "not-published"})
    await refused(http, lms, "bad signature", signing_key=other_kid)
    await refused(http, lms, "nonce is not the one", nonce="chosen-by-an-attacker")
    await refused(http, lms, "resource-link", **{CLAIM + "message_type": "LtiDeepLinkingRequest"})
    unknown = await post_launch(http, lms.token("n"), "no-such-state")
    assert unknown.status_code == 400 and "unknown or replayed state" in unknown.text


async def test_a_replayed_launch_is_refused(
    browser: Browser, lms: Lms, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    http = await browser()
    params = await login(http, lms)
    token = lms.token(params["nonce"])
    ticket_path(await post_launch(http, token, params["state"]))
    again = await post_launch(http, token, params["state"])  # the same state: spent
    assert again.status_code == 400 and "unknown or replayed state" in again.text
    # An attacker with a fresh login gets a fresh nonce: the old token's does not match it.
    fresh = await login(http, lms)
    mismatched = await post_launch(http, token, fresh["state"])
    assert mismatched.status_code == 400 and "nonce is not the one" in mismatched.text
    # Even a flow carrying the same nonce (as if our nonce leaked) cannot use the token twice.
    await auth_flows.start(db, AuthFlow("forged-state-1", "lti", params["nonce"], platform_id=lms.id))
    replayed = await post_launch(http, token, "forged-state-1")
    assert replayed.status_code == 400 and "nonce already used" in replayed.text


async def test_a_ticket_works_once(browser: Browser, lms: Lms) -> None:
    http = await browser()
    params = await login(http, lms)
    path = ticket_path(await post_launch(http, lms.token(params["nonce"]), params["state"]))
    assert (await open_ticket(http, path)).status_code == 303
    other = await browser()
    second = await other.get(path)
    assert second.status_code == 400 and "expired or was used" in second.text
    ticket = {"ticket": path.rsplit("/", 1)[1]}
    posted = await other.post("/auth/ticket", data=ticket, headers={"Origin": APP})
    assert posted.status_code == 400 and "expired or was used" in posted.text
    assert "studyai_session" not in other.cookies
    assert (await other.get("/auth/session")).status_code == 401


async def test_login_initiations_that_are_refused(browser: Browser, lms: Lms) -> None:
    http = await browser()
    unknown = await http.post(
        "/lti/login",
        data={"iss": "https://nobody.example", "login_hint": "h", "target_link_uri": f"{APP}/lti/launch"},
    )
    assert unknown.status_code == 400 and "unknown platform" in unknown.json()["detail"]
    deployment = await http.get(
        "/lti/login",
        params={"iss": lms.issuer, "login_hint": "h", "target_link_uri": "x", "lti_deployment_id": "nope"},
    )
    assert deployment.status_code == 400 and "unknown deployment" in deployment.json()["detail"]
    without_client = await http.get(
        "/lti/login", params={"iss": lms.issuer, "login_hint": "h", "target_link_uri": f"{APP}/lti/launch"}
    )
    assert without_client.status_code == 302  # the issuer's only platform


async def test_platforms_are_for_administrators(
    api: Api,
    admin: Caller,
    make_user: UserFactory,
    key_server: KeyServer,
    browser: Browser,
    db: psycopg.AsyncConnection[dict[str, Any]],
) -> None:
    issuer = f"https://canvas-{time.time_ns()}.example"
    body = {
        "name": "Canvas",
        "issuer": issuer,
        "client_id": "10000000000001",
        "auth_login_url": "https://sso.canvas.example/api/lti/authorize_redirect",
        "jwks": {"keys": []},
        "deployment_ids": ["1:abc"],
    }
    teacher = await make_user("teacher")
    assert (await api.http.post("/admin/lti/platforms", json=body, headers=teacher)).status_code == 403
    assert (await api.http.get("/admin/lti/platforms", headers=teacher)).status_code == 403
    both = await api.http.post(
        "/admin/lti/platforms", json=body | {"jwks_url": key_server.url}, headers=admin
    )
    assert both.status_code == 422
    created = await api.http.post("/admin/lti/platforms", json=body, headers=admin)
    assert created.status_code == 201, created.text
    assert (await api.http.post("/admin/lti/platforms", json=body, headers=admin)).status_code == 409
    listed = (await api.http.get("/admin/lti/platforms", headers=admin)).json()
    assert issuer in [platform["issuer"] for platform in listed]
    platform_id = created.json()["id"]
    assert (await api.http.delete(f"/admin/lti/platforms/{platform_id}", headers=admin)).status_code == 204
    assert (await api.http.delete(f"/admin/lti/platforms/{platform_id}", headers=admin)).status_code == 404
    gone = await (await browser()).get(
        "/lti/login", params={"iss": issuer, "login_hint": "h", "target_link_uri": f"{APP}/lti/launch"}
    )
    assert gone.status_code == 400
    actions = await (
        await db.execute(
            "SELECT action FROM security_events WHERE target_id = %s ORDER BY id", (platform_id,)
        )
    ).fetchall()
    assert [row["action"] for row in actions] == ["lti.platform_registered", "lti.platform_removed"]


async def test_the_tools_configuration_and_keys(api: Api, data_dir: Path) -> None:
    config = (await api.http.get("/lti/config")).json()
    assert config["login_initiation_url"] == f"{APP}/lti/login"
    assert config["redirect_uris"] == [f"{APP}/lti/launch"] and config["jwks_url"] == f"{APP}/lti/jwks"
    assert config["domain"] == "studyai.test"
    keys = (await api.http.get("/lti/jwks")).json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["alg"] == "RS256" and keys[0]["kid"]
    assert "d" not in keys[0]  # the public half only
    # The key is the deployment's, in Postgres (tests/backend/test_shared_state.py), not this machine's.
    assert not (data_dir / "lti" / "tool_key.pem").exists()


def test_the_cli_registers_and_lists_platforms(
    services: ServiceUrls, data_dir: Path, key_server: KeyServer
) -> None:
    issuer = f"https://moodle-cli-{time.time_ns()}.example"
    args = [
        "--name",
        "Moodle",
        "--issuer",
        issuer,
        "--client-id",
        "abc",
        "--jwks-url",
        key_server.url,
        "--auth-login-url",
        f"{issuer}/mod/lti/auth.php",
        "--deployment-id",
        "1",
        "--deployment-id",
        "2",
    ]
    created = studyai("lti", "register", *args, data_dir=data_dir, database_url=services.database_url)
    assert created.returncode == 0, created.stderr
    again = studyai("lti", "register", *args, data_dir=data_dir, database_url=services.database_url)
    assert again.returncode == 1 and "exists already" in again.stderr
    listed = studyai("lti", "list", data_dir=data_dir, database_url=services.database_url)
    assert listed.returncode == 0, listed.stderr
    line = next(line for line in listed.stdout.splitlines() if issuer in line)
    assert created.stdout.strip().splitlines()[-1] in line and "\t1,2\t" in line


async def test_a_disabled_account_cannot_launch(
    browser: Browser, lms: Lms, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    _, session = await launch(await browser(), lms, sub="to-be-disabled")
    await accounts.set_disabled(db, user_id=session["user"]["id"], disabled=True)
    http = await browser()
    params = await login(http, lms)
    page = await post_launch(http, lms.token(params["nonce"], sub="to-be-disabled"), params["state"])
    assert page.status_code == 403 and "disabled" in page.text and "/auth/ticket/" not in page.text


async def test_two_first_launches_at_once_make_one_account_and_one_project(
    browser: Browser, lms: Lms, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    """The same new person launching a new course twice at once (two tabs): one account, one project."""
    tabs = [await browser(), await browser()]
    params = [await login(tab, lms) for tab in tabs]
    course = {CLAIM + "context": {"id": f"race-{time.time_ns()}", "title": "Races"}}
    pages = await asyncio.gather(
        *(
            post_launch(tab, lms.token(p["nonce"], sub="racer", **course), p["state"])
            for tab, p in zip(tabs, params, strict=True)
        )
    )
    opened = [await open_ticket(tab, ticket_path(page)) for tab, page in zip(tabs, pages, strict=True)]
    assert {response.headers["location"] for response in opened} == {opened[0].headers["location"]}
    sessions = [(await tab.get("/auth/session")).json() for tab in tabs]
    assert sessions[0]["user"]["id"] == sessions[1]["user"]["id"]
    prefix = "lti-" + hashlib.sha1(f"{lms.issuer}|racer".encode()).hexdigest()[:16]
    made = await (
        await db.execute("SELECT count(*) AS n FROM users WHERE email LIKE %s", (prefix + "%",))
    ).fetchone()
    assert made["n"] == 1  # the launch that lost the race left no account behind


def test_a_ticket_goes_only_to_a_path_of_this_app() -> None:
    """Where a used ticket sends the browser: the path the store wrote, never another site."""
    assert own_path("/app/#/projects/42") == "/app/#/projects/42"
    for foreign in (
        "https://evil.example/app/",
        "//evil.example/app/",
        "evil.example",
        "javascript:alert(1)",
    ):
        assert own_path(foreign) == "/app/", foreign

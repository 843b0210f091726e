"""The school's own doors in Chromium: "Sign in with <school>" against a real OpenID Connect provider
process, and "Link your school login" on the Account screen of a password account; an LTI 1.3 launch
from an LMS simulated here (its own keys, login page and form posts), the tool shown in the LMS's iframe
and the app opened in a window of its own, as a teacher and then a student of the same course. The
launch's window first asks "Continue as …?": nothing signs the browser in before that click, framed or
not (issue 39)."""

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import escape
from typing import Any

import httpx
import psycopg
import pytest
from joserfc.jwk import RSAKey
from playwright.async_api import Browser, BrowserContext, Page, expect

from core.store.accounts import accounts
from tests.conftest import UserFactory, changed_settings
from tests.e2e.conftest import (
    LOAD,
    PASSWORD,
    PageProblems,
    WebStack,
    axe_violations,
    fresh_page,
    new_context,
    password_account,
    sign_in_with_password,
)
from tests.lti_platform import CLAIM, LIS, launch_token, platform_key, platform_server
from tests.oidc_provider import running_provider, set_claims


@pytest.fixture(scope="module")
def school(web_stack: WebStack) -> Iterator[str]:
    """The provider process, and the served app configured for it for the module."""
    with running_provider() as issuer:
        values = {
            "OIDC_ISSUER": issuer,
            "OIDC_CLIENT_ID": "studyai-e2e",
            "OIDC_CLIENT_SECRET": "e2e-secret",
            "OIDC_NAME": "Escola Modelo",
            "OIDC_ALLOWED_DOMAINS": "school.example",
        }
        with changed_settings(web_stack.app, **values):
            yield issuer


async def test_sign_in_with_the_schools_login(web_stack: WebStack, browser: Browser, school: str) -> None:
    sub, email = f"student-{time.time_ns()}", f"ana-{time.time_ns()}@school.example"
    await set_claims(school, sub, email=email, email_verified=True, name="Ana")
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    school_link = page.get_by_role("link", name=re.compile("Sign in with Escola Modelo"))
    await expect(school_link).to_be_visible()
    assert problems.errors == []  # the app's sign-in screen has none
    await school_link.click()
    await page.wait_for_url(f"{school}/**")  # the provider's own page
    await page.locator("input[name=sub]").fill(sub)
    problems.errors.clear()  # the provider's own page (a test tool) fetches a stylesheet it cannot reach
    await page.get_by_role("button", name="Authorize").click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    assert page.url.startswith(f"{web_stack.base}/app/")
    session = await page.evaluate("async () => (await (await fetch('/auth/session')).json())")
    assert session["user"]["email"] == email
    cookies = {c["name"]: c for c in await context.cookies()}
    assert cookies["studyai_session"]["httpOnly"] and cookies["studyai_session"]["sameSite"] == "Lax"
    assert "studyai_session" not in await page.evaluate("() => document.cookie")
    # The provider's page may log its unreachable stylesheet late, after the clear above: only the app's
    # errors count.
    assert [error for error in problems.errors if school not in error] == []
    await context.close()


async def test_a_password_account_links_its_school_login_from_the_account_screen(
    web_stack: WebStack, browser: Browser, db: Any, school: str
) -> None:
    """Offered while no school login is linked, as a plain link (a full page navigation with the session's
    cookie): the provider's answer is linked to the signed-in account, which keeps its password; the
    school login then opens the same account, and the offer is gone."""
    email = await password_account(db, "linker")
    sub = f"linker-{time.time_ns()}"
    await set_claims(school, sub, email=email, email_verified=True, name="Lia")
    context, page, problems = await fresh_page(browser)
    await sign_in_with_password(page, web_stack.base, email)
    await page.get_by_role("link", name="Account", exact=True).click()
    link = page.get_by_role("button", name="Link your school login")
    await expect(link).to_be_visible(timeout=LOAD)
    assert await axe_violations(page) == []
    await link.click()  # POST /auth/oidc/link with the session's CSRF token, then to the provider
    await page.wait_for_url(f"{school}/**")
    await page.locator("input[name=sub]").fill(sub)
    problems.errors.clear()  # the provider's own page fetches a stylesheet it cannot reach
    await page.get_by_role("button", name="Authorize").click()
    await page.wait_for_url(f"{web_stack.base}/app/#/account**")
    await expect(page.get_by_role("heading", name="Account", exact=True)).to_be_visible(timeout=LOAD)
    await expect(page.get_by_role("heading", name="Profile")).to_be_visible()
    await expect(page.get_by_role("button", name="Link your school login")).to_have_count(0)
    assert (await session_user(context, web_stack.base) or {}).get("email") == email

    # Signed out, the school login opens the same account; the password still works too.
    await page.get_by_role("button", name="Sign out").click()
    await page.get_by_role("link", name=re.compile("Sign in with Escola Modelo")).click()
    await page.wait_for_url(f"{school}/**")
    await page.locator("input[name=sub]").fill(sub)
    problems.errors.clear()
    await page.get_by_role("button", name="Authorize").click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)
    assert (await session_user(context, web_stack.base) or {}).get("email") == email
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        signed = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert signed.status_code == 200
    assert [error for error in problems.errors if school not in error] == []  # as above
    await context.close()


async def session_user(context: BrowserContext, base: str) -> dict[str, Any] | None:
    """The account this browser context's cookies sign in (GET /auth/session), or None."""
    answer = await context.request.get(f"{base}/auth/session")
    return (await answer.json())["user"] if answer.ok else None


@dataclass
class Platform:
    """An LMS: its key set, the page a course's link opens (login initiation, posted to the tool), its
    authorization endpoint (a signed ID token posted back to the tool), and a course page framing the
    tool as an LMS does."""

    tool: str  # the app's base URL
    key: RSAKey = field(default_factory=lambda: platform_key("lms-1"))
    url: str = ""
    roles: dict[str, str] = field(default_factory=dict)  # login_hint -> LTI role
    client_id: str = "studyai-tool"
    deployment: str = "course-deployment"

    def page(self, path: str, query: dict[str, list[str]]) -> tuple[str, str]:
        if path == "/course":  # the LMS's course page: the tool in an iframe
            frame = f'<iframe title=studyAI src="/link?person={query["person"][0]}"></iframe>'
            return f"<!doctype html><title>LMS</title>{frame}", "text/html"
        if path == "/link":  # the course's link: the login initiation, posted to the tool
            fields = {
                "iss": self.url,
                "login_hint": query["person"][0],
                "target_link_uri": f"{self.tool}/lti/launch",
                "client_id": self.client_id,
                "lti_deployment_id": self.deployment,
            }
            return auto_post(f"{self.tool}/lti/login", fields), "text/html"
        if path == "/auth":  # the authorization endpoint: the signed launch, posted back
            person = query["login_hint"][0]
            token = launch_token(
                self.key,
                issuer=self.url,
                client_id=self.client_id,
                nonce=query["nonce"][0],
                tool=self.tool,
                deployment=self.deployment,
                claims={
                    "sub": person,
                    "name": person.title(),
                    CLAIM + "roles": [LIS + self.roles[person]],
                    CLAIM + "context": {"id": "math-7b", "title": "Mathematics 7B"},
                },
            )
            return auto_post(
                query["redirect_uri"][0], {"id_token": token, "state": query["state"][0]}
            ), "text/html"
        if path == "/favicon.ico":  # a top-level page's icon: none
            return "", "image/x-icon"
        raise KeyError(path)


def auto_post(action: str, fields: dict[str, str]) -> str:
    inputs = "".join(f'<input type=hidden name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items())
    return (
        f'<!doctype html><title>LMS</title><form method=post action="{escape(action)}">{inputs}'
        "<button>Continue</button></form><script>document.forms[0].submit()</script>"
    )


@pytest.fixture(scope="module")
def platform(web_stack: WebStack) -> Iterator[Platform]:
    lms = Platform(tool=web_stack.base)
    with platform_server(lambda: {"keys": [lms.key.as_dict(private=False)]}, lms.page) as url:
        lms.url = url
        yield lms


@pytest.fixture(scope="module")
async def registered(web_stack: WebStack, platform: Platform, make_user: UserFactory, db: Any) -> Platform:
    """The LMS, registered by an administrator over the API."""
    await register(web_stack, platform, make_user, db)
    return platform


async def register(web_stack: WebStack, platform: Platform, make_user: UserFactory, db: Any) -> None:
    admin = await make_user("lms-admin")
    await accounts.set_admin(db, user_id=admin.id)
    body = {
        "name": "School LMS",
        "issuer": platform.url,
        "client_id": platform.client_id,
        "auth_login_url": f"{platform.url}/auth",
        "jwks_url": f"{platform.url}/jwks",
        "deployment_ids": ["course-deployment"],
    }
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        response = await http.post("/admin/lti/platforms", json=body, headers=admin)
    assert response.status_code == 201, response.text


async def launch(browser: Browser, platform: Platform, person: str, role: str) -> dict[str, Any]:
    """The person opens the course's link in the LMS: the tool's page in the frame, its button opens the
    app's "Continue as …?" page in a window of its own, signed in only after its Continue. The new
    window's session."""
    platform.roles[person] = role
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(f"{platform.url}/course?person={person}")
    frame = page.frame_locator("iframe[title=studyAI]")
    button = frame.get_by_role("link", name="Open studyAI")
    await expect(button).to_be_visible()
    async with context.expect_page() as opened:
        await button.click()
    app = await opened.value
    await continue_as(app, context, platform.tool, person)
    await expect(app.get_by_role("heading", name="Mathematics 7B")).to_be_visible()
    session = await app.evaluate("async () => (await (await fetch('/auth/session')).json())")
    project_id = app.url.split("#/projects/")[1].split("/")[0]
    await context.close()
    return {"session": session, "project_id": project_id}


async def continue_as(page: Page, context: BrowserContext, tool: str, person: str) -> None:
    """On the ticket's page (GET /auth/ticket/…): it names the account, and the browser is not signed in
    until its Continue button (a form POSTed to /auth/ticket) is clicked."""
    await expect(page.get_by_text(re.compile(f"Continue as {person.title()}"))).to_be_visible(timeout=LOAD)
    assert await session_user(context, tool) is None
    assert [c for c in await context.cookies() if c["name"].endswith("studyai_session")] == []
    await expect(page.get_by_role("link", name="Cancel")).to_be_visible()
    await page.get_by_role("button", name="Continue", exact=True).click()
    await page.wait_for_url(f"{tool}/app/**")
    assert (await session_user(context, tool) or {}).get("display_name") == person.title()


async def test_an_lms_launch_opens_the_course_for_its_teacher_and_then_its_student(
    browser: Browser, registered: Platform, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    platform = registered
    teacher = await launch(browser, platform, f"teacher{time.time_ns()}", "Instructor")
    student = await launch(browser, platform, f"student{time.time_ns()}", "Learner")
    assert teacher["project_id"] == student["project_id"]
    cur = await db.execute(
        "SELECT u.id, m.role FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = %s",
        (teacher["project_id"],),
    )
    roles = {str(row["id"]): row["role"] for row in await cur.fetchall()}
    assert roles[teacher["session"]["user"]["id"]] == "owner"
    assert roles[student["session"]["user"]["id"]] == "viewer"


async def test_a_launch_outside_a_frame_signs_the_browser_in_only_after_continue(
    browser: Browser, registered: Platform
) -> None:
    """The LMS opens the tool in a window of its own (no frame): the launch no longer goes into a session
    by itself; the "Continue as …?" page asks first, and only its button signs the browser in."""
    platform = registered
    person = f"student{time.time_ns()}"
    platform.roles[person] = "Learner"
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{platform.url}/link?person={person}")  # the course's link, at the top level
    asks = page.get_by_text(re.compile("Continue as"))
    opens = page.get_by_role("link", name="Open studyAI")  # a launch page that waits for a click
    await expect(asks.or_(opens)).to_be_visible(timeout=LOAD)
    assert await session_user(context, platform.tool) is None
    if await opens.count():
        async with context.expect_page() as opened:
            await opens.click()
        page = await opened.value
        problems = PageProblems(page)
    await page.wait_for_timeout(500)  # nothing more happens by itself
    assert await session_user(context, platform.tool) is None
    assert await axe_violations(page) == []
    await continue_as(page, context, platform.tool, person)
    await expect(page.get_by_role("heading", name="Mathematics 7B")).to_be_visible(timeout=LOAD)
    assert problems.errors == []
    await context.close()

"""Password sign-in in Chromium (issue 30's foundation): the sign-in screen passes axe; a wrong password
is refused; the right one reaches the projects with nothing secret in the page's storage (the session is
an HttpOnly cookie; its CSRF token lives in memory and goes with every write, an upload's too); a reload
stays signed in; sign-out ends the session; a session that ends mid-use sends the app back to sign-in,
saying so. The API key stays a developer's way in, as before; single sign-on is a link where configured."""

from pathlib import Path
from typing import Any

from playwright.async_api import Browser, expect

from tests.conftest import changed_settings
from tests.e2e.conftest import (
    LOAD,
    PASSWORD,
    WebStack,
    axe_violations,
    check,
    fresh_page,
    new_context,
    password_account,
    sign_in_with_password,
)


async def test_password_sign_in_projects_and_sign_out(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    email = await password_account(db, "student", display_name="Ada Student")
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_label("Invitation code")).to_be_visible()
    await expect(page.get_by_role("button", name="Use an API key")).to_be_visible()
    await check(page, shots, "30-sign-in-password")

    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill("not the password")
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("alert")).to_contain_text("Wrong email or password")

    await sign_in_with_password(page, web_stack.base, email, PASSWORD)
    await expect(page.get_by_role("navigation", name="Your account")).to_contain_text("Ada Student")
    # Nothing secret where scripts can read it: no key stored, the cookie is HttpOnly.
    assert await page.evaluate("() => localStorage.length + sessionStorage.length") == 0
    assert "studyai_session" not in await page.evaluate("() => document.cookie")
    cookies = {c["name"]: c for c in await context.cookies()}
    assert cookies["studyai_session"]["httpOnly"] is True

    # A write with the session: the app sends the CSRF token (the API refuses a cookie write without it).
    await page.get_by_label("Name").fill("Cell biology")
    await page.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("heading", name="Cell biology")).to_be_visible(timeout=LOAD)
    project_url = page.url
    # An upload (XMLHttpRequest, for its progress) carries the token too.
    transfer = await page.evaluate_handle(
        """(text) => { const t = new DataTransfer();
           t.items.add(new File([text], 'cells.md', {type: 'text/markdown'})); return t; }""",
        "# Cells\n\nCells divide by mitosis.",
    )
    await page.dispatch_event("[data-testid=dropzone]", "drop", {"dataTransfer": transfer})
    await expect(page.locator("tr[data-document=cells] .badge")).to_have_text("Ready", timeout=120_000)

    # A reload asks the server again (GET /auth/session) and stays signed in.
    await page.reload()
    await expect(page.get_by_role("heading", name="Cell biology")).to_be_visible(timeout=LOAD)
    # Where a launch from the LMS lands (its Continue, POST /auth/ticket, redirects to /app/#/projects/<id>).
    project_id = project_url.split("#/p/")[1].split("/")[0]
    await page.goto(f"{web_stack.base}/app/#/")
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    await page.goto(f"{web_stack.base}/app/#/projects/{project_id}")
    await expect(page.locator("tr[data-document=cells]")).to_be_visible(timeout=LOAD)

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await page.goto(project_url)
    await page.reload()
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)

    # Signed in again, then the session ends under the app (here: its cookie is gone): the next request
    # gets 401 and the app returns to sign-in with the reason.
    await sign_in_with_password(page, web_stack.base, email)
    await context.clear_cookies()
    await page.get_by_role("link", name="Cell biology").click()
    await expect(page.get_by_role("status")).to_contain_text("Your session has ended")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    assert problems.expected("status of 401") == []  # the wrong password, and the ended session
    await context.close()


async def test_api_key_sign_in_still_works_beside_the_password(
    web_stack: WebStack, browser: Browser, make_user: Any
) -> None:
    """Developers keep the key: kept in this tab's sessionStorage, sent as a Bearer header."""
    user = await make_user("developer")
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(f"{web_stack.base}/app/")
    await page.get_by_role("button", name="Use an API key").click()
    await expect(page.get_by_label("API key")).to_be_focused()
    await page.get_by_label("API key").fill(user["Authorization"].removeprefix("Bearer "))
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)
    assert await page.evaluate("() => sessionStorage.getItem('studyai.key')") is not None
    assert [c for c in await context.cookies() if c["name"] == "studyai_session"] == []
    await page.get_by_role("link", name="Account").click()
    await expect(page.get_by_role("heading", name="API keys")).to_be_visible(timeout=LOAD)
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    assert await page.evaluate("() => sessionStorage.length") == 0
    await context.close()


async def test_single_sign_on_button_and_its_refusal(web_stack: WebStack, browser: Browser) -> None:
    """With a provider configured the screen offers it (a plain link: the server redirects to the provider
    and back); a refused sign-on comes back to #/signin?error=CODE and is said in words."""
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_role("link", name="Sign in with")).to_have_count(0)
    school = {"OIDC_ISSUER": "https://idp.school.example", "OIDC_CLIENT_ID": "studyai", "OIDC_NAME": "Escola"}
    with changed_settings(web_stack.app, **school):
        await page.reload()
        button = page.get_by_role("link", name="Sign in with Escola")
        await expect(button).to_have_attribute("href", "/auth/oidc/login?next=/app/")
        await page.goto(f"{web_stack.base}/app/#/signin?error=wrong_browser")
        await page.reload()
        await expect(page.get_by_role("alert")).to_contain_text("started in another browser")
        assert await axe_violations(page) == []
    await context.close()


async def test_an_idle_session_and_a_disabled_account_end_at_the_next_request(
    web_stack: WebStack, browser: Browser, db: Any
) -> None:
    """Neither waits for the browser: the session is checked in SQL on every request. An idle one (past
    SESSION_IDLE_MINUTES) and one whose account an administrator disabled both send the app back to
    sign-in on the next request, saying the session has ended; the disabled account cannot sign in again."""
    email = await password_account(db, "idle")
    context = await new_context(browser)
    page = await context.new_page()
    await sign_in_with_password(page, web_stack.base, email)
    await db.execute(
        "UPDATE browser_sessions SET last_seen_at = now() - interval '13 hours'"
        " WHERE user_id = (SELECT id FROM users WHERE email = %s)",
        (email,),
    )
    await page.reload()
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)

    await sign_in_with_password(page, web_stack.base, email)
    await page.get_by_label("Name").fill("Before the account was disabled")
    await page.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("heading", name="Before the account was disabled")).to_be_visible(
        timeout=LOAD
    )
    await db.execute("UPDATE users SET disabled_at = now() WHERE email = %s", (email,))
    # What the "Projects" link does, without clicking it: a project screen's own fetches still in flight
    # may already have met the disabled account and re-rendered the app (the link gone mid-click).
    await page.evaluate("location.hash = '#/'")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_role("status")).to_contain_text("Your session has ended")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("alert")).to_contain_text("Wrong email or password")
    await context.close()

"""A class's way in, end to end in Chromium (issue 30, once its branches are merged): an owner creates an
invitation and copies its link; a student types the code on the sign-in screen, sees what it leads to and
joins with a new account (screenshots docs/screenshots/join-1-code, join-2-preview, join-3-joined with
STUDYAI_SCREENSHOTS=docs/screenshots); a signed-in student joins by the link with one click, another signs
in on the join page; a wrong or revoked code says why; sign-up where the server allows it; the first run
creates the administrator, who disables an account and hands over a reset link that sets a new password;
the account screen renames, changes the password, signs out another browser and makes an API key. Every
screen passes axe."""

import re
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Browser, BrowserContext, Page, expect

from core.store.accounts import accounts
from tests.conftest import Caller, UserFactory, changed_settings, create_project
from tests.e2e.conftest import (
    LOAD,
    NEW_PASSWORD,
    PASSWORD,
    PageProblems,
    WebStack,
    check,
    fresh_page,
    new_context,
    password_account,
    set_password_by_link,
    sign_in_with_password,
)


async def signed_in_page(browser: Browser, base: str, email: str) -> tuple[BrowserContext, Page]:
    context = await new_context(browser)
    page = await context.new_page()
    await sign_in_with_password(page, base, email)
    return context, page


async def open_tab(page: Page, name: str) -> None:
    await page.get_by_role("navigation", name="Project sections").get_by_role("link", name=name).click()


async def invitation(base: str, owner: Caller, project_id: str, **body: Any) -> dict[str, Any]:
    """An invitation made over the API with the owner's key, as a script would."""
    async with httpx.AsyncClient(base_url=base, headers=owner) as http:
        made = await http.post(f"/projects/{project_id}/invitations", json=body)
    assert made.status_code == 201, made.text
    return dict(made.json())


async def owner_project(base: str, make_user: UserFactory, name: str) -> tuple[Caller, str]:
    owner = await make_user("teacher")
    async with httpx.AsyncClient(base_url=base) as http:
        return owner, await create_project(http, owner, name=name)


async def test_owner_invites_and_a_student_joins_with_the_code(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    teacher = await password_account(db, "teacher", display_name="Prof. Lima")
    context, page = await signed_in_page(browser, web_stack.base, teacher)
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web_stack.base)
    problems = PageProblems(page)
    await page.get_by_label("Name").fill("Genetics")
    await page.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("heading", name="Genetics", exact=True)).to_be_visible(timeout=LOAD)
    await open_tab(page, "Invitations")
    await expect(page.get_by_role("heading", name="Invitations")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_text("No invitations yet.")).to_be_visible()
    await page.get_by_label("Role").select_option("viewer")
    await page.get_by_label("Valid for (hours)").fill("48")
    await page.get_by_label("Maximum uses").fill("30")
    await page.get_by_role("button", name="Create invitation").click()
    row = page.locator("li.invitation").first
    await expect(row).to_contain_text("0 of 30 uses")
    code = (await row.locator(".invitation-code code").inner_text()).strip()
    assert len(code) == 11 and code[5] == "-", code
    link = await row.locator("input.link-field").input_value()
    assert link.endswith(f"/app/#/join/{code}"), link
    await row.get_by_role("button", name=f"Copy link: {code}").click()
    await expect(row.locator("button.copy")).to_have_text("Copied")
    assert await page.evaluate("() => navigator.clipboard.readText()") == link
    await check(page, shots, "31-invitations")

    # The student: the code typed on the sign-in screen, its preview, a new account made with it.
    student, spage, student_problems = await fresh_page(browser)
    await spage.goto(f"{web_stack.base}/app/")
    await spage.get_by_label("Invitation code").fill(code.lower())
    await check(spage, shots, "join-1-code")
    await spage.get_by_role("button", name="Continue").click()
    await expect(spage.get_by_role("heading", name="Join Genetics as viewer")).to_be_visible(timeout=LOAD)
    await check(spage, shots, "join-2-preview")
    new = spage.get_by_role("region", name="New here? Create your account")
    email = f"new-student-{id(spage)}@school.example"
    await new.get_by_label("Your name").fill("Bea Student")
    await new.get_by_label("Email").fill(email)
    await new.get_by_label("New password").fill(PASSWORD)
    await new.get_by_role("button", name="Create account and join").click()
    await expect(spage.get_by_role("heading", name="Genetics", exact=True)).to_be_visible(timeout=LOAD)
    await expect(spage.locator(".project-head .badge")).to_have_text("Viewer")
    await expect(spage.get_by_role("navigation", name="Your account")).to_contain_text("Bea Student")
    await check(spage, shots, "join-3-joined")
    # No secret in the browser's storage: only the mark that a welcome waits (screens/welcome.js).
    stored = await spage.evaluate("() => [...Object.keys(localStorage), ...Object.keys(sessionStorage)]")
    assert [re.sub(r"[0-9a-f-]{36}$", "ID", key) for key in stored] == ["studyai.welcome.ID"], stored
    await student.close()  # the student is done

    # The owner sees the use counted, and the student among the members.
    await page.reload()
    await expect(page.locator("li.invitation").first).to_contain_text("1 of 30 uses")
    await open_tab(page, "Members")
    await expect(page.locator("ul.members")).to_contain_text(email)
    # A viewer who forgets the password: no owner can make a reset link for anyone (issue 39); only an
    # administrator, or the account's own mailbox ("Forgot your password?").
    await expect(page.locator("ul.members > li")).not_to_have_count(0)
    await expect(page.get_by_role("button", name=re.compile("Reset link"))).to_have_count(0)
    await expect(page.get_by_text("Password reset link for")).to_have_count(0)
    assert problems.errors == [] and student_problems.errors == []
    await context.close()


async def test_join_by_link_signed_in_and_by_signing_in_on_the_join_page(
    web_stack: WebStack, browser: Browser, db: Any, make_user: UserFactory
) -> None:
    owner, project_id = await owner_project(web_stack.base, make_user, "Organic chemistry")
    made = await invitation(web_stack.base, owner, project_id, role="editor", max_uses=5)

    # Signed in already: the link shows the preview, one click joins.
    first = await password_account(db, "assistant")
    context, page = await signed_in_page(browser, web_stack.base, first)
    problems = PageProblems(page)
    await page.goto(made["link"])
    await expect(page.get_by_role("heading", name="Join Organic chemistry as editor")).to_be_visible(
        timeout=LOAD
    )
    await page.get_by_role("button", name="Join Organic chemistry").click()
    await expect(page.get_by_role("heading", name="Organic chemistry", exact=True)).to_be_visible(
        timeout=LOAD
    )
    await expect(page.locator(".project-head .badge")).to_have_text("Editor")
    assert page.url.endswith(f"#/p/{project_id}/documents")
    assert problems.errors == []
    await context.close()

    # Not signed in, with an account: sign in on the join page, and the join follows.
    second = await password_account(db, "assistant")
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(made["link"])
    existing = page.get_by_role("region", name="I have an account")
    await existing.get_by_label("Email").fill(second)
    await existing.get_by_label("Password").fill(PASSWORD)
    await existing.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("heading", name="Organic chemistry", exact=True)).to_be_visible(
        timeout=LOAD
    )
    await expect(page.locator(".project-head .badge")).to_have_text("Editor")
    await context.close()

    async with httpx.AsyncClient(base_url=web_stack.base, headers=owner) as http:
        members = (await http.get(f"/projects/{project_id}/members")).json()["members"]
    assert {first, second} <= {m["email"] for m in members}


async def test_a_wrong_or_revoked_code_says_why(
    web_stack: WebStack, browser: Browser, db: Any, make_user: UserFactory
) -> None:
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(f"{web_stack.base}/app/#/join/ZZZZZ-ZZZZZ")
    await expect(page.get_by_role("alert")).to_contain_text("No such invitation")
    await expect(page.get_by_role("link", name="Try another code")).to_be_visible()

    # An owner revokes an invitation in the app: its link stops working at once.
    teacher = await password_account(db, "teacher")
    owner, page2 = await signed_in_page(browser, web_stack.base, teacher)
    page2.on("dialog", lambda dialog: dialog.accept())
    await page2.get_by_label("Name").fill("Physics")
    await page2.get_by_role("button", name="Create").click()
    await expect(page2.get_by_role("heading", name="Physics", exact=True)).to_be_visible(timeout=LOAD)
    await open_tab(page2, "Invitations")
    await page2.get_by_role("button", name="Create invitation").click()
    row = page2.locator("li.invitation").first
    code = (await row.locator(".invitation-code code").inner_text()).strip()
    await row.get_by_role("button", name=f"Revoke: {code}").click()
    await expect(page2.locator("li.invitation").first).to_contain_text("Revoked")
    await page.goto(f"{web_stack.base}/app/#/join/{code}")
    await page.reload()
    await expect(page.get_by_role("alert")).to_contain_text("No such invitation")
    await context.close()
    await owner.close()


async def test_sign_up_only_where_the_server_allows_it(web_stack: WebStack, browser: Browser) -> None:
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_role("link", name="Create an account")).to_have_count(0)
    with changed_settings(web_stack.app, SIGNUP_ENABLED=True):
        await page.reload()
        await page.get_by_role("link", name="Create an account").click()
        await expect(page.get_by_role("heading", name="Create an account")).to_be_visible(timeout=LOAD)
        await page.get_by_label("Email").fill(f"self-{id(page)}@school.example")
        await page.get_by_label("New password").fill("a" * 12)  # too common: the API's reason shows
        await page.get_by_role("button", name="Create an account").click()
        await expect(page.get_by_role("alert")).to_contain_text("common")
        await page.get_by_label("New password").fill(PASSWORD)
        await page.get_by_role("button", name="Create an account").click()
        await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)
    await context.close()


async def test_first_run_then_administration_and_a_reset_link(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    # The first run is the state with no active administrator: this test's database is shared with the
    # other browser tests, none of which needs one, so any made earlier are made ordinary accounts.
    await db.execute("UPDATE users SET is_admin = false WHERE is_admin")
    token = await accounts.issue_token(db, kind="setup", hours=1)
    student = await password_account(db, "student", display_name="Caio Student")

    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_text("no administrator yet")).to_be_visible()
    await page.goto(f"{web_stack.base}/app/#/setup?token={token}")
    await expect(page.get_by_role("heading", name="Set up studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_label("Set-up token")).to_have_value(token)
    admin_email = f"admin-{id(page)}@school.example"
    await page.get_by_label("Your name").fill("Ana Admin")
    await page.get_by_label("Email").fill(admin_email)
    await page.get_by_label("New password").fill(PASSWORD)
    await check(page, shots, "32-setup")
    await page.get_by_role("button", name="Create the administrator").click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)

    await page.get_by_role("link", name="Administration").click()
    await expect(page.get_by_role("heading", name="Administration")).to_be_visible(timeout=LOAD)
    await page.get_by_role("searchbox", name="Search by email").fill(student)
    await page.get_by_role("button", name="Search", exact=True).click()
    row = page.locator(f"li.user[data-email='{student}']")
    await expect(row).to_contain_text("Caio Student")
    await row.get_by_role("button", name=f"Disable: {student}").click()
    await expect(row).to_contain_text("Disabled")
    await row.get_by_role("button", name=f"Enable: {student}").click()
    await expect(row.get_by_text("Disabled")).to_have_count(0)
    await row.get_by_role("button", name=f"Reset link: {student}").click()
    link = await row.get_by_label(f"Password reset link for {student}").input_value()
    assert "/app/#/reset?token=" in link, link
    await expect(page.locator("ul.audit")).to_contain_text("session.created")
    await check(page, shots, "33-admin")
    assert problems.errors == []

    # The student opens the link: a new password, signed in at once; the old password no longer works.
    other, spage = await set_password_by_link(browser, link)
    await spage.goto(link)
    await spage.reload()
    await expect(spage.get_by_role("alert")).to_contain_text("expired or was already used")
    await other.close()
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        old = await http.post("/auth/login", json={"email": student, "password": PASSWORD})
        new = await http.post("/auth/login", json={"email": student, "password": NEW_PASSWORD})
    assert old.status_code == 401 and new.status_code == 200

    # The set-up link again: the server has its administrator.
    await page.goto(f"{web_stack.base}/app/#/setup?token={token}")
    await page.reload()
    await expect(page.get_by_text("This server already has an administrator.")).to_be_visible()
    await context.close()


async def test_account_name_password_sessions_and_keys(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    email = await password_account(db, "student")
    laptop, page = await signed_in_page(browser, web_stack.base, email)
    phone, other = await signed_in_page(browser, web_stack.base, email)
    problems = PageProblems(page)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("link", name="Account", exact=True).click()
    await expect(page.get_by_role("heading", name="Account", exact=True)).to_be_visible(timeout=LOAD)

    await page.get_by_label("Your name").fill("Davi Student")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("navigation", name="Your account")).to_contain_text("Davi Student")

    sessions = page.locator("ul.sessions > li")
    await expect(sessions).to_have_count(2)
    await expect(page.locator("ul.sessions > li[data-current=true]")).to_contain_text("This browser")
    await check(page, shots, "34-account")
    await page.locator("ul.sessions > li:not([data-current])").get_by_role("button").click()
    await expect(sessions).to_have_count(1)
    # The other browser's session has ended: its next request returns it to sign-in, saying so.
    await other.get_by_role("link", name="Account", exact=True).click()
    await expect(other.get_by_text("Your session has ended")).to_be_visible()

    await page.get_by_label("Current password").fill("not my password")
    await page.get_by_label("New password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Change password").click()
    await expect(page.locator("form[aria-labelledby=password-title] [role=alert]")).to_be_visible()
    await expect(page.get_by_role("heading", name="Account", exact=True)).to_be_visible(
        timeout=LOAD
    )  # still signed in
    await page.get_by_label("Current password").fill(PASSWORD)
    await page.get_by_role("button", name="Change password").click()
    await expect(page.get_by_text("Password changed")).to_be_visible()

    await page.get_by_label("New key's name").fill("my script")
    await page.get_by_role("button", name="Create key").click()
    key = await page.get_by_label("Key “my script”").input_value()
    assert key.startswith("sk-studyai-")
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        assert (await http.get("/projects", headers={"Authorization": f"Bearer {key}"})).status_code == 200
        await page.get_by_role("button", name="Revoke: my script").click()
        await expect(page.locator("ul.keys")).not_to_contain_text("my script")
        assert (await http.get("/projects", headers={"Authorization": f"Bearer {key}"})).status_code == 401
    # The wrong current password's refusal (its status is the accounts routes' choice).
    assert problems.expected("status of 401", "status of 403", "status of 400") == []
    await laptop.close()
    await phone.close()

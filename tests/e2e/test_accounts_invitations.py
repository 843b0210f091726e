"""Issue 39's ways in, in Chromium: an owner invites by email (a personal invitation: the same answer whether
or not the address has an account), sees it pending and withdraws one; the invitee finds it on the Account
screen (the projects screen says it waits) and accepts it (into the project) or declines it. An
administrator creates a teacher's account and hands over its one-time link, which sets the password once;
teachers are marked in Administration, and with PROJECT_CREATORS=teachers only they are offered "New
project". "Forgot your password?" is offered only where mail is set up (a local SMTP server here), says the
same whatever the email, and its mailed link sets a new password. An API key cannot set a first password:
the server's reason is shown. Every screen passes axe (screenshots 39-*)."""

import asyncio
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.conftest import UserFactory, changed_settings
from tests.e2e.conftest import (
    LOAD,
    NEW_PASSWORD,
    PASSWORD,
    OpenPage,
    PageProblems,
    WebStack,
    check,
    fresh_page,
    password_account,
    set_password_by_link,
    sign_in_with_password,
)

SENT = "they will see it when they sign in with that address"


async def signed_in(browser: Browser, base: str, email: str) -> tuple[BrowserContext, Page, PageProblems]:
    context, page, problems = await fresh_page(browser)
    await sign_in_with_password(page, base, email)
    return context, page, problems


async def new_project(page: Page, name: str) -> None:
    """A project made on the projects screen; its Members tab open."""
    # The projects screen first: a project's Members tab has a "Name" field of its own (its settings).
    await expect(page.get_by_role("heading", name="New project")).to_be_visible(timeout=LOAD)
    await page.get_by_label("Name").fill(name)
    await page.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible(timeout=LOAD)
    await page.get_by_role("navigation", name="Project sections").get_by_role("link", name="Members").click()
    await expect(page.get_by_role("heading", name="Invite by email")).to_be_visible(timeout=LOAD)


async def invite(page: Page, email: str, role: str) -> str:
    """Invites the email from the Members tab; the sentence the app answers with."""
    form = page.locator("form[aria-labelledby=invite-member]")
    await form.get_by_label("Email").fill(email)
    await form.get_by_label("Role").select_option(role)
    await form.get_by_role("button", name="Invite", exact=True).click()
    said = form.get_by_role("status")
    await expect(said).to_contain_text(f"Invitation sent to {email}: {SENT}")
    await expect(page.locator("ul.pending-invitations")).to_contain_text(email)
    return await said.inner_text()


async def test_owner_invites_by_email_and_the_invitee_accepts_on_the_account_screen(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    teacher = await password_account(db, "teacher", display_name="Prof. Souza")
    student = await password_account(db, "student")
    other = await password_account(db, "other")
    nobody = f"nobody-{time.time_ns()}@school.example"  # no account has it
    owner, page, problems = await signed_in(browser, web_stack.base, teacher)
    page.on("dialog", lambda dialog: dialog.accept())
    await new_project(page, "Botany")
    await expect(page.get_by_text("No pending invitations.")).to_be_visible()
    await expect(page.get_by_role("button", name=re.compile("Reset link"))).to_have_count(0)

    # The answer is the same for an address with an account and one without (mail is off here).
    to_student = await invite(page, student, "editor")
    to_nobody = await invite(page, nobody, "viewer")
    assert to_student.replace(student, "EMAIL") == to_nobody.replace(nobody, "EMAIL")
    assert "mail" not in to_student.split(":", 1)[1]
    await invite(page, other, "viewer")
    pending = page.locator("ul.pending-invitations > li")
    await expect(pending).to_have_count(3)
    await expect(page.locator(f"ul.pending-invitations > li[data-email='{student}']")).to_contain_text(
        "Editor"
    )
    # One sent by mistake is withdrawn: its invitee never sees it.
    await page.get_by_role("button", name=f"Withdraw: {other}").click()
    await expect(pending).to_have_count(2)
    await expect(page.locator("ul.pending-invitations")).not_to_contain_text(other)
    await check(page, shots, "39-members-invitations")

    # The invitee signs in: the projects screen says an invitation waits; the Account screen lists it.
    invitee, spage, student_problems = await signed_in(browser, web_stack.base, student)
    await expect(spage.get_by_text("An invitation to a project is waiting for you.")).to_be_visible()
    await spage.get_by_role("link", name="See the invitations").click()
    mine = spage.locator("ul.my-invitations > li")
    await expect(mine).to_have_count(1, timeout=LOAD)
    await expect(mine).to_contain_text("Botany")
    await expect(mine).to_contain_text("Editor")
    await expect(mine).to_contain_text("from Prof. Souza")  # who invited: their name (else their email)
    await check(spage, shots, "39-account-invitations")
    await spage.get_by_role("button", name="Accept: Botany").click()
    await expect(spage.get_by_role("heading", name="Botany", exact=True)).to_be_visible(timeout=LOAD)
    await expect(spage.locator(".project-head .badge")).to_have_text("Editor")
    await spage.get_by_role("link", name="Account", exact=True).click()
    await expect(spage.get_by_text("No invitations waiting for you.")).to_be_visible(timeout=LOAD)

    # The owner sees a member now, no longer a pending invitation.
    await page.reload()
    await expect(page.locator("ul.members")).to_contain_text(student, timeout=LOAD)
    await expect(page.locator("ul.pending-invitations > li")).to_have_count(1)
    await expect(page.locator("ul.pending-invitations")).not_to_contain_text(student)

    # The withdrawn invitation is not there for its invitee.
    third, opage, _ = await signed_in(browser, web_stack.base, other)
    await expect(opage.get_by_text("waiting for you")).to_have_count(0)
    await opage.get_by_role("link", name="Account", exact=True).click()
    await expect(opage.get_by_text("No invitations waiting for you.")).to_be_visible(timeout=LOAD)
    await third.close()

    # A second project's invitation, declined: the student is not in it.
    await page.get_by_role("link", name="Projects", exact=True).click()
    await new_project(page, "Zoology")
    await invite(page, student, "viewer")
    await spage.reload()
    await expect(mine).to_have_count(1, timeout=LOAD)
    await spage.get_by_role("button", name="Decline: Zoology").click()
    await expect(spage.get_by_text("No invitations waiting for you.")).to_be_visible()
    await spage.get_by_role("link", name="studyAI").click()
    await expect(spage.locator("ul.projects")).to_contain_text("Botany", timeout=LOAD)
    await expect(spage.locator("ul.projects")).not_to_contain_text("Zoology")
    await page.reload()
    await expect(page.get_by_text("No pending invitations.")).to_be_visible(timeout=LOAD)
    await expect(page.locator("ul.members")).not_to_contain_text(student)
    assert problems.errors == [] and student_problems.errors == []
    await owner.close()
    await invitee.close()


async def test_an_administrator_creates_a_teacher_who_sets_a_password_with_the_link(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    admin = await password_account(db, "admin", display_name="Ana Admin")
    await db.execute("UPDATE users SET is_admin = true WHERE email = %s", (admin,))
    student = await password_account(db, "student")
    teacher = f"teacher-{time.time_ns()}@school.example"
    with changed_settings(web_stack.app, PROJECT_CREATORS="teachers"):
        context, page, problems = await signed_in(browser, web_stack.base, admin)
        await page.get_by_role("link", name="Administration").click()
        form = page.locator("form[aria-labelledby=new-account-title]")
        await expect(form.get_by_role("heading", name="Create a teacher account")).to_be_visible(timeout=LOAD)
        await form.get_by_label("Email").fill(teacher)
        await form.get_by_label("Name (optional)").fill("Tomás Teacher")
        await expect(form.get_by_label("Teacher (creates projects)")).to_be_checked()
        await form.get_by_role("button", name="Create account").click()
        made = form.get_by_role("status")
        await expect(made).to_contain_text(f"Account created for {teacher}")
        await expect(made).to_contain_text("works once")
        await expect(made).not_to_contain_text("mailed")
        link = await form.get_by_label(f"Link to set the password of {teacher}").input_value()
        assert "/app/#/reset?token=" in link, link
        await check(page, shots, "39-admin-new-teacher")
        # The same email again: the server's reason.
        await form.get_by_label("Email").fill(teacher)
        await form.get_by_role("button", name="Create account").click()
        await expect(form.get_by_role("alert")).to_contain_text("already exists")

        # The new account is listed as a teacher; the administrator unmarks and marks it again.
        await page.get_by_role("searchbox", name="Search by email").fill(teacher)
        await page.get_by_role("button", name="Search", exact=True).click()
        row = page.locator(f"li.user[data-email='{teacher}']")
        await expect(row).to_contain_text("Tomás Teacher")
        await expect(row).to_contain_text("no password")
        toggle = row.get_by_role("checkbox", name=f"Teacher: {teacher}")
        await expect(toggle).to_be_checked()
        for checked in (False, True):
            async with page.expect_response(lambda r: r.request.method == "PATCH") as answered:
                await toggle.set_checked(checked)
            assert (await answered.value).ok
            await expect(toggle).to_be_checked(checked=checked)
            assert await is_teacher(db, teacher) is checked
        assert problems.expected("status of 409") == []  # the taken email's refusal

        # The teacher opens the link: a password, signed in, and offered "New project".
        other, tpage = await set_password_by_link(browser, link)
        await expect(tpage.get_by_role("navigation", name="Your account")).to_contain_text("Tomás Teacher")
        await expect(tpage.get_by_role("heading", name="New project")).to_be_visible()
        await tpage.get_by_label("Name").fill("Chemistry 9A")
        await tpage.get_by_role("button", name="Create").click()
        await expect(tpage.get_by_role("heading", name="Chemistry 9A", exact=True)).to_be_visible(
            timeout=LOAD
        )
        # The link works once.
        await tpage.goto(link)
        await tpage.reload()
        await expect(tpage.get_by_role("alert")).to_contain_text("expired or was already used")
        await other.close()

        # Someone who is no teacher is told who creates projects here, and offered no form.
        learner, lpage, _ = await signed_in(browser, web_stack.base, student)
        await expect(lpage.get_by_text("On this server, teachers create projects")).to_be_visible()
        await expect(lpage.get_by_role("heading", name="New project")).to_have_count(0)
        await check(lpage, shots, "39-projects-teachers-create")
    # PROJECT_CREATORS=everyone (the default): everyone is offered it again.
    await lpage.reload()
    await expect(lpage.get_by_role("heading", name="New project")).to_be_visible(timeout=LOAD)
    await learner.close()
    await context.close()
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        signed = await http.post("/auth/login", json={"email": teacher, "password": NEW_PASSWORD})
    assert signed.status_code == 200 and signed.json()["user"]["is_teacher"] is True


async def is_teacher(db: Any, email: str) -> bool:
    row = await (await db.execute("SELECT is_teacher FROM users WHERE email = %s", (email,))).fetchone()
    return bool(row["is_teacher"])


class Inbox:
    """An aiosmtpd handler keeping every message it is given."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd's name
        self.messages.append(
            (list(envelope.rcpt_tos), message_from_bytes(envelope.content, policy=policy.default))
        )
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [message for recipients, message in self.messages if address in recipients]

    async def wait_for(self, address: str, timeout: float = 20) -> EmailMessage:
        deadline = time.monotonic() + timeout
        while not self.to(address):
            assert time.monotonic() < deadline, f"no mail to {address}"
            await asyncio.sleep(0.2)
        return self.to(address)[-1]


@contextmanager
def mail_set_up(web_stack: WebStack) -> Iterator[Inbox]:
    """A local SMTP server, and the served app mailing through it (PUBLIC_URL: the served address), for
    one block."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    values = {
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": port,
        "SMTP_SECURITY": "none",
        "SMTP_FROM": "study@school.example",
        "PUBLIC_URL": web_stack.base,
    }
    try:
        with changed_settings(web_stack.app, **values):
            yield inbox
    finally:
        controller.stop()


@pytest.fixture
def mail(web_stack: WebStack) -> Iterator[Inbox]:
    with mail_set_up(web_stack) as inbox:
        yield inbox


async def test_forgot_password_only_with_mail_the_same_answer_for_any_email_and_the_mailed_link(
    web_stack: WebStack, browser: Browser, db: Any, shots: Path
) -> None:
    email = await password_account(db, "forgetful")
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_role("link", name="Forgot your password?")).to_have_count(0)  # no mail here

    with mail_set_up(web_stack) as inbox:
        await page.reload()
        await page.get_by_role("link", name="Forgot your password?").click()
        await expect(page.get_by_role("heading", name="Forgot your password?")).to_be_visible(timeout=LOAD)
        unknown = f"nobody-{time.time_ns()}@school.example"
        answers = []
        for address in (unknown, email):
            await page.reload()  # a fresh form: no earlier answer on the screen
            await page.get_by_label("Email").fill(address)
            await page.get_by_role("button", name="Send the link").click()
            said = page.get_by_role("status").filter(has_text="If an account has this email")
            await expect(said).to_have_text(
                "If an account has this email, a link to set a new password has been sent to it."
            )
            answers.append(await said.inner_text())
        assert answers[0] == answers[1]
        await check(page, shots, "39-forgot-password")
        message = await inbox.wait_for(email)
        assert inbox.to(unknown) == []
        [link] = re.findall(r"\S+/app/#/reset\?token=\S+", message.get_content())
        assert link.startswith(web_stack.base), link

        other, _ = await set_password_by_link(browser, link)
        await other.close()
    async with httpx.AsyncClient(base_url=web_stack.base) as http:
        old = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        new = await http.post("/auth/login", json={"email": email, "password": NEW_PASSWORD})
    assert old.status_code == 401 and new.status_code == 200
    assert problems.errors == []
    await context.close()


async def test_an_invitation_by_email_says_it_was_mailed_where_mail_is_set_up(
    web_stack: WebStack, browser: Browser, db: Any, mail: Inbox
) -> None:
    teacher = await password_account(db, "teacher")
    student = await password_account(db, "student")
    context, page, problems = await signed_in(browser, web_stack.base, teacher)
    await new_project(page, "Astronomy")
    said = await invite(page, student, "viewer")
    assert said.endswith("and by mail."), said
    message = await mail.wait_for(student)
    assert "Astronomy" in message.get_content() or "Astronomy" in str(message["Subject"])
    assert problems.errors == []
    await context.close()


async def test_an_api_key_cannot_set_a_first_password_and_the_server_says_why(
    open_page: OpenPage, make_user: UserFactory
) -> None:
    user = await make_user("scripted")  # an account with a key and no password
    page, problems = await open_page(user, "/account")
    form = page.locator("form[aria-labelledby=password-title]")
    await expect(form.get_by_role("heading", name="Set password")).to_be_visible(timeout=LOAD)
    await expect(page.get_by_label("Current password")).to_have_count(0)
    await form.get_by_label("New password").fill(NEW_PASSWORD)
    await form.get_by_role("button", name="Set password").click()
    await expect(form.get_by_role("alert")).to_have_text(
        "Sign in again with your school account (or use a reset link) to set a first password."
    )
    await expect(page.get_by_role("heading", name="Account", exact=True)).to_be_visible()  # still signed in
    assert problems.expected("status of 403") == []

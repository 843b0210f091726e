"""The web app in a real browser: Debian's Chromium (/usr/bin/chromium, driven by Playwright; never a
browser download) against a real stack: the session's embedded Postgres and Redis, a real worker
subprocess, the API served by uvicorn on a free port with the app at /app, and a fake chat model that
streams cited answers (benchmarks/fake_answers.py). The embedding model is the real one.

Screenshots go to $STUDYAI_SCREENSHOTS (docs/screenshots to refresh the committed ones), else to the
test's temporary folder."""

import os
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, async_playwright, expect

from backend.main import create_app
from benchmarks.fake_answers import CitingChatServer
from benchmarks.fake_model import ThreadedServer
from benchmarks.stack import indexed_project
from core.accounts.passwords import hash_password
from core.confidence import Calibration, chat_model_key, save_calibration
from core.confidence.store import calibration_path
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts
from tests.conftest import Caller, UserFactory
from tests.label_models import one_signal

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
AXE = Path(__file__).parent / "vendor" / "axe.min.js"


@dataclass
class WebStack:
    base: str
    fake: CitingChatServer
    app: FastAPI  # the served app: a test may swap its runtime's resources (tests.conftest.change_runtime)


class ApiServer(ThreadedServer):
    """The app under uvicorn in a thread (its own event loop), as `studyai up` serves it."""

    def __init__(self, settings: Settings, urls: ServiceUrls) -> None:
        # 180 s: the lifespan loads the embedding model.
        self.app = create_app(settings, urls)
        super().__init__(self.app, start_timeout_s=180, name="the API server")


# A free answer's confidence from its self-check alone, P(yes) as the fake chat model gives it
# (benchmarks/fake_answers.py SELF_CHECK_YES): 0.95 -> p 0.99 high, 0.5 -> p 0.5 medium, 0.05 -> p 0.01 low.
TEST_CALIBRATION = {
    "answer": one_signal("self_yes", mean=0.5, scale=0.1, weight=1.0, high_min=0.9, low_below=0.2)
}


@pytest.fixture(scope="session")
def calibration(settings: Settings) -> Iterator[Path]:
    """The labels' calibration for the chat model the stack counts as the embedded one, in the data
    directory (where it wins over the shipped one), written before the API server loads it."""
    chat, embedding = chat_model_key(settings), settings.embeddings.model
    folder = settings.services.data_dir / "calibration"
    path = save_calibration(folder, Calibration(chat, embedding, TEST_CALIBRATION, source="tests/e2e"))
    assert path == calibration_path(settings.services.data_dir, chat, embedding)
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def web_stack(
    settings: Settings, services: ServiceUrls, worker: subprocess.Popen[bytes], calibration: Path
) -> Iterator[WebStack]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium (.ci/run does)")
    with CitingChatServer() as fake, ApiServer(settings, replace(services, llm_base_url=fake.url)) as api:
        yield WebStack(base=f"http://127.0.0.1:{api.port}", fake=fake, app=api.app)


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield launched
        await launched.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("STUDYAI_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class PageProblems:
    """Console errors, failed requests and CSP violations seen by a page; a test asserts there are none."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        # The app asks GET /auth/session at start whether the browser is signed in: 401 is the answer "no".
        if "status of 401" in message.text and message.location.get("url", "").endswith("/auth/session"):
            return
        self.errors.append(f"console: {message.text} (at {message.location.get('url', '?')})")

    def expected(self, *fragments: str) -> list[str]:
        """The errors that contain none of the fragments (e.g. a deliberate 403 logged by the browser)."""
        return [e for e in self.errors if not any(f in e for f in fragments)]


async def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core (vendored, tests only) on the page as it is: the serious and critical violations. It is
    evaluated through the DevTools protocol, so the app's CSP (no inline script) stays as it is."""
    if not await page.evaluate("() => typeof window.axe === 'object'"):
        await page.evaluate(AXE.read_text())
    result = await page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))"
    )
    return [v for v in result if v["impact"] in ("serious", "critical")]


COURSE = """# Ownership

## The rules

Each value in Rust has an owner. There can only be one owner at a time. When the owner goes out of
scope, the value will be dropped. These rules let Rust make memory safety guarantees without needing a
garbage collector.

## Moves

Assigning a String to another variable moves it: the first variable is no longer valid, so the memory
is freed exactly once when the second one goes out of scope.
"""
QUESTION = "What happens to a value when its owner goes out of scope?"


@dataclass
class Course:
    owner: Caller
    project_id: str
    document_id: str


LOAD = 15_000  # ms for a whole screen to appear (a sign-in, a reload) on a busy machine


async def new_context(browser: Browser, *, phone: bool = False) -> BrowserContext:
    size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 860}
    return await browser.new_context(viewport=size, locale="en-GB")


async def fresh_page(browser: Browser) -> tuple[BrowserContext, Page, PageProblems]:
    """A page of a new browser context (signed in as nobody), and the problems it will see."""
    context = await new_context(browser)
    page = await context.new_page()
    return context, page, PageProblems(page)


async def sign_in(page: Page, base: str, caller: Caller) -> None:
    """Signs in with the caller's API key (the sign-in screen's secondary option, for developers)."""
    await page.goto(f"{base}/app/")
    await page.get_by_role("button", name="Use an API key").click()
    await page.get_by_label("API key").fill(caller["Authorization"].removeprefix("Bearer "))
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)


PASSWORD = "correct horse battery staple 42"
NEW_PASSWORD = "a brand new passphrase 77"


async def password_account(
    db: psycopg.AsyncConnection[dict[str, Any]], name: str = "person", *, display_name: str | None = None
) -> str:
    """A new account with PASSWORD (no API key), made in the stack's database as an administrator makes
    one (its address vouched for); its email."""
    email = f"{name}-{time.time_ns()}@school.example"
    made = await accounts.create_account(
        db, email=email, password_hash=hash_password(PASSWORD), display_name=display_name, email_verified=True
    )
    assert made is not None
    return email


async def sign_in_with_password(page: Page, base: str, email: str, password: str = PASSWORD) -> None:
    """The sign-in screen's email and password form, to the project list."""
    await page.goto(f"{base}/app/")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in", exact=True).click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)


async def set_password_by_link(browser: Browser, link: str) -> tuple[BrowserContext, Page]:
    """A new browser opens a reset (or first-password) link and chooses NEW_PASSWORD there: it is then
    signed in, on the project list. Its context and page."""
    context = await new_context(browser)
    page = await context.new_page()
    await page.goto(link)
    await expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible(timeout=LOAD)
    await page.get_by_label("New password").fill(NEW_PASSWORD)
    await page.get_by_role("button", name="Set password").click()
    await expect(page.get_by_role("heading", name="Projects")).to_be_visible(timeout=LOAD)
    return context, page


async def invite_and_accept(
    http: httpx.AsyncClient, owner: Caller, project_id: str, member: Caller, role: str
) -> None:
    """The owner invites the member's email (202: a personal invitation) and the member accepts it, over
    the API with their keys, as any client would: the member is in the project with that role."""
    invited = await http.post(
        f"/projects/{project_id}/members", json={"email": member.email, "role": role}, headers=owner
    )
    assert invited.status_code == 202, invited.text
    waiting = await http.get("/me/invitations", headers=member)
    assert waiting.status_code == 200, waiting.text
    accepted = [
        await http.post(f"/me/invitations/{invitation['id']}/accept", headers=member)
        for invitation in waiting.json()
    ]
    assert [a.status_code for a in accepted] == [200] * len(accepted), [a.text for a in accepted]
    assert project_id in {a.json()["project_id"] for a in accepted}


OpenPage = Callable[..., Awaitable[tuple[Page, PageProblems]]]


@pytest.fixture
async def open_page(browser: Browser, web_stack: WebStack) -> AsyncIterator[OpenPage]:
    """`page, problems = await open_page(caller, screen)`: a page of a new browser context, signed in as
    `caller` and on `screen` (the app's route after `#`) if one is given, with the problems it has
    seen. The test's contexts are closed after it."""
    contexts: list[BrowserContext] = []

    async def open_(
        caller: Caller, screen: str | None = None, *, phone: bool = False
    ) -> tuple[Page, PageProblems]:
        context = await new_context(browser, phone=phone)
        contexts.append(context)
        page = await context.new_page()
        problems = PageProblems(page)
        await sign_in(page, web_stack.base, caller)
        if screen is not None:
            await page.goto(f"{web_stack.base}/app/#{screen}")
        return page, problems

    yield open_
    for context in contexts:
        await context.close()


async def check(page: Page, shots: Path, name: str) -> None:
    """No serious or critical accessibility violation on the screen as it is; and its screenshot."""
    await page.wait_for_load_state("networkidle")
    violations = await axe_violations(page)
    assert violations == [], f"{name}: {violations}"
    await page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
async def course(web_stack: WebStack, make_user: UserFactory) -> AsyncIterator[Course]:
    """A project with the course indexed, made over the API as any client would."""
    owner = await make_user("teacher")
    yield Course(owner, *await indexed_project(web_stack.base, owner, "Rust 101", "ownership.md", COURSE))


COURSE_PT = """# Posse

## As regras

Cada valor em Rust tem um dono. Só pode haver um dono por vez. Quando o dono sai do escopo, o valor é
descartado. Essas regras dão a Rust segurança de memória sem um coletor de lixo.

## Movimentos

Atribuir uma String a outra variável a move: a primeira variável deixa de valer, e a memória é
liberada uma única vez, quando a segunda sai do escopo.
"""


@pytest.fixture(scope="module")
async def course_pt(web_stack: WebStack, make_user: UserFactory) -> AsyncIterator[Course]:
    """A Portuguese project (the app speaks Portuguese in it) with the course in Portuguese."""
    owner = await make_user("teacher")
    made = await indexed_project(web_stack.base, owner, "Rust 101 (pt)", "posse.md", COURSE_PT, language="pt")
    yield Course(owner, *made)

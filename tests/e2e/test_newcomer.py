"""Issue 42, what a newcomer met on the way, in Chromium: a Portuguese class's join page speaks Portuguese to
an English browser, and so do its refusals (a too common password); the sign-up screen says the server's
refusal in the browser's language; a new member lands on the documents with a welcome that points to
Perguntar (Ask), which stays until it is dismissed; and while an answer is on its way the page says what
it waits for, in order: the search of the material, the model's queue, the model, the answer being
written. Phone and desktop; every screen passes axe (screenshots newcomer-*)."""

import re
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, expect
from redis.asyncio import Redis

from core.llm.admission import LlmAdmission
from core.runtime.services import ServiceUrls
from tests.conftest import Caller, UserFactory, change_runtime, changed_settings, create_project
from tests.e2e.conftest import (
    LOAD,
    PASSWORD,
    Course,
    OpenPage,
    PageProblems,
    WebStack,
    axe_violations,
    check,
)

COMMON = "a" * 12  # too common: refused with the reason
TOO_COMMON_PT = "Essa senha é comum demais"
TOO_COMMON_EN = "This password is too common"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 860}


async def context_in(browser: Browser, locale: str, *, phone: bool = False) -> BrowserContext:
    return await browser.new_context(viewport=PHONE if phone else DESKTOP, locale=locale)


async def class_invitation(base: str, owner: Caller, name: str, language: str) -> tuple[str, str]:
    """A project in `language` and a viewer invitation to it, made over the API: (project id, link)."""
    async with httpx.AsyncClient(base_url=base) as http:
        project_id = await create_project(http, owner, name=name, language=language)
        made = await http.post(f"/projects/{project_id}/invitations", json={"role": "viewer"}, headers=owner)
    assert made.status_code == 201, made.text
    return project_id, str(made.json()["link"])


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
async def test_a_portuguese_class_welcomes_an_english_browser_in_portuguese(
    phone: bool, web_stack: WebStack, browser: Browser, make_user: UserFactory, shots: Path
) -> None:
    owner = await make_user("professora")
    name = f"Genética {'celular' if phone else 'computador'}"
    project_id, link = await class_invitation(web_stack.base, owner, name, "pt")
    device = "phone" if phone else "desktop"
    context = await context_in(browser, "en-GB", phone=phone)  # the student's browser speaks English
    page = await context.new_page()
    problems = PageProblems(page)
    await page.goto(link)
    await expect(page.get_by_role("heading", name=f"Entrar em {name} como leitor")).to_be_visible(
        timeout=LOAD
    )
    await expect(page.locator("html")).to_have_attribute("lang", "pt-BR")
    new = page.get_by_role("region", name="Novo por aqui? Crie sua conta")
    await new.get_by_label("Seu nome").fill("Bia Aluna")
    await new.get_by_label("E-mail").fill(f"bia-{time.time_ns()}@school.example")
    await new.get_by_label("Nova senha").fill(COMMON)
    await new.get_by_role("button", name="Criar conta e entrar").click()
    # The server's refusal, in the class's language (not the browser's).
    await expect(new.get_by_role("alert")).to_contain_text(TOO_COMMON_PT)
    await expect(new.get_by_role("alert")).not_to_contain_text(TOO_COMMON_EN)
    await check(page, shots, f"newcomer-join-pt-refused-{device}")
    await new.get_by_label("Nova senha").fill(PASSWORD)
    await new.get_by_role("button", name="Criar conta e entrar").click()

    # Joined: the documents, with a welcome that points to Perguntar.
    await expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible(timeout=LOAD)
    assert page.url.endswith(f"#/p/{project_id}/documents")
    welcome = page.get_by_role("region", name=f"Boas-vindas a {name}!")
    await expect(welcome).to_contain_text("Perguntar")
    pointer = welcome.get_by_role("link", name="Fazer uma pergunta")
    await expect(pointer).to_have_attribute("href", f"#/p/{project_id}/ask")
    await check(page, shots, f"newcomer-welcome-{device}")
    await page.reload()  # it waits until the student dismisses it
    await expect(welcome).to_be_visible(timeout=LOAD)
    if phone:  # following the pointer is a dismissal too
        await pointer.click()
        await expect(page.get_by_label("Sua pergunta")).to_be_visible(timeout=LOAD)
        await page.goto(f"{web_stack.base}/app/#/p/{project_id}/documents")
    else:
        await welcome.get_by_role("button", name="Entendi").click()
        await expect(welcome).to_have_count(0)
        await page.reload()
    await expect(page.get_by_role("heading", name="Documentos")).to_be_visible(timeout=LOAD)
    await expect(page.locator(".welcome")).to_have_count(0)
    assert await page.evaluate("() => Object.keys(localStorage)") == []
    assert problems.expected("status of 422") == []  # the refused password, logged by the browser
    await context.close()


async def test_an_english_class_and_a_wrong_code_follow_the_browser(
    web_stack: WebStack, browser: Browser, make_user: UserFactory
) -> None:
    """An English class stays English to a Portuguese browser; a code that leads nowhere has no class, so
    the refusal is in the browser's language."""
    owner = await make_user("teacher")
    _, link = await class_invitation(web_stack.base, owner, "Genetics", "en")
    context = await context_in(browser, "pt-BR")
    page = await context.new_page()
    await page.goto(link)
    await expect(page.get_by_role("heading", name="Join Genetics as viewer")).to_be_visible(timeout=LOAD)
    new = page.get_by_role("region", name="New here? Create your account")
    await new.get_by_label("Email").fill(f"ana-{time.time_ns()}@school.example")
    await new.get_by_label("New password").fill(COMMON)
    await new.get_by_role("button", name="Create account and join").click()
    await expect(new.get_by_role("alert")).to_contain_text(TOO_COMMON_EN)
    await page.goto(f"{web_stack.base}/app/#/join/ZZZZZ-ZZZZZ")
    await page.reload()  # a fresh page: the class before is not this code's
    await expect(page.get_by_role("alert")).to_contain_text("Este convite não existe ou já expirou.")
    await context.close()


@pytest.mark.parametrize(("locale", "said"), [("pt-BR", TOO_COMMON_PT), ("en-GB", TOO_COMMON_EN)])
async def test_sign_up_says_the_refused_password_in_the_browsers_language(
    locale: str, said: str, web_stack: WebStack, browser: Browser, shots: Path
) -> None:
    context = await context_in(browser, locale, phone=locale == "pt-BR")
    page = await context.new_page()
    pt = locale == "pt-BR"
    with changed_settings(web_stack.app, SIGNUP_ENABLED=True):
        await page.goto(f"{web_stack.base}/app/#/signup")
        create = "Criar uma conta" if pt else "Create an account"
        await expect(page.get_by_role("heading", name=create)).to_be_visible(timeout=LOAD)
        await page.get_by_label("E-mail" if pt else "Email").fill(f"self-{time.time_ns()}@school.example")
        await page.get_by_label("Nova senha" if pt else "New password").fill(COMMON)
        await page.get_by_role("button", name=create).click()
        await expect(page.get_by_role("alert")).to_contain_text(said)
        if pt:
            await check(page, shots, "newcomer-signup-refused-pt-phone")
    await context.close()


# The waits of an answer -----------------------------------------------------------------------------

# Every state the reply's wait line takes, with its text, in order (the page's own DOM, watched through
# the DevTools protocol: the CSP allows no inline script).
WATCH_WAITS = """() => {
  window.__waits = [];
  const seen = () => {
    const line = document.querySelector('.msg.assistant:last-child .wait');
    const now = line ? [line.dataset.wait, line.textContent.trim()] : null;
    const last = window.__waits.at(-1);
    if (now && (!last || last[0] !== now[0] || last[1] !== now[1])) window.__waits.push(now);
  };
  new MutationObserver(seen).observe(document.body, {
    childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['data-wait'],
  });
}"""
QUESTION_PT = "O que acontece com um valor quando o dono sai do escopo?"


@pytest.fixture
async def one_slot(web_stack: WebStack, services: ServiceUrls) -> AsyncIterator[LlmAdmission]:
    """The served app's model queue swapped for one of the test's own with one slot; the test holds it
    through its own client of the same Redis."""
    namespace = f"test-newcomer:{uuid.uuid4().hex}"
    runtime = web_stack.app.state.runtime
    served = LlmAdmission(runtime.redis, concurrency=1, queue_max=4, poll_s=0.05, namespace=namespace)
    previous = runtime.admission
    change_runtime(web_stack.app, admission=served)
    redis = Redis.from_url(services.redis_url)
    try:
        yield LlmAdmission(redis, concurrency=1, queue_max=4, poll_s=0.05, namespace=namespace)
    finally:
        change_runtime(web_stack.app, admission=previous)
        await redis.aclose()


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
async def test_each_wait_says_what_it_waits_for(
    phone: bool,
    web_stack: WebStack,
    open_page: OpenPage,
    course_pt: Course,
    one_slot: LlmAdmission,
    shots: Path,
) -> None:
    device = "phone" if phone else "desktop"
    page, problems = await open_page(course_pt.owner, f"/p/{course_pt.project_id}/ask", phone=phone)
    await expect(page.get_by_label("Sua pergunta")).to_be_visible(timeout=LOAD)
    await page.evaluate(WATCH_WAITS)
    fake = web_stack.fake
    fake.first_delay_s, fake.delay_s = 1.5, 0.1  # the model's wait and its writing, long enough to see
    try:
        async with one_slot.slot(user="another-student"):  # the model is busy: the question queues
            await page.get_by_label("Sua pergunta").fill(QUESTION_PT)
            await page.locator(".ask-form button[type=submit]").click()
            reply = page.locator(".msg.assistant").last
            wait = reply.locator(".wait")
            await expect(wait).to_have_text(
                "Trechos encontrados — aguardando o modelo: posição 1 na fila.", timeout=30_000
            )
            await expect(reply.locator(".passages > li").first).to_be_visible()  # the passages are there
            # Not check(): the answer's stream keeps the network busy, so no waiting for it to idle.
            assert await axe_violations(page) == []
            await page.screenshot(path=str(shots / f"newcomer-wait-queued-{device}.png"), full_page=True)
        await expect(wait).to_have_text("Escrevendo a resposta…", timeout=30_000)
        await expect(reply.locator(".answer.markdown")).to_be_visible(timeout=60_000)
    finally:
        fake.first_delay_s, fake.delay_s = 0.0, 0.03
    await expect(reply.locator(".wait")).to_have_count(0)
    waits: list[list[str]] = await page.evaluate("() => window.__waits")
    states = " ".join(state for state, _ in waits)
    # The passages may show a moment before the queue's first word: "model" before "queued" is allowed.
    assert re.fullmatch(r"searching (model )?queued model writing", states), waits
    said = dict((state, text) for state, text in waits)
    assert said == {
        "searching": "Procurando no seu material…",
        "model": "Trechos encontrados — aguardando o modelo…",
        "queued": "Trechos encontrados — aguardando o modelo: posição 1 na fila.",
        "writing": "Escrevendo a resposta…",
    }, waits
    assert problems.errors == []

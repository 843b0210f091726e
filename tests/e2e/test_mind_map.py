"""The mind map in Chromium, on real material (a Rust-book chapter in English, a Pense em Python chapter in
Portuguese), on a desktop and on a phone: the map draws the chapter's headings, a node collapses and
expands (by pointer and by keyboard), a node opens its passages and a question about it on the Ask
screen, one finger pans and two pinch, the same nodes read as a list, and the map downloads as SVG and
PNG. Every screen passes axe-core and is photographed (mindmap-*.png)."""

import re
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from benchmarks.stack import indexed_project
from tests.conftest import SHARED_DATA, UserFactory
from tests.e2e.conftest import LOAD, Course, OpenPage, WebStack, check

CHAPTER = "ch04-02-references-and-borrowing.md"
CAPITULO = "03-funcoes.md"
# Touch pointers on the map, each step (type, pointer id, x, y) dispatched as a phone's browser does.
TOUCH = """(steps) => { const svg = document.querySelector('svg.mm-svg');
  for (const [type, id, x, y] of steps) svg.dispatchEvent(new PointerEvent(type,
    {pointerId: id, pointerType: 'touch', clientX: x, clientY: y, bubbles: true, isPrimary: id === 1})); }"""


@pytest.fixture(scope="module")
async def rust_chapter(web_stack: WebStack, make_user: UserFactory) -> Course:
    owner = await make_user("mapper")
    text = (SHARED_DATA / "rust-book" / "src" / CHAPTER).read_text()
    return Course(owner, *await indexed_project(web_stack.base, owner, "Rust borrowing", CHAPTER, text))


@pytest.fixture(scope="module")
async def capitulo(web_stack: WebStack, make_user: UserFactory) -> Course:
    owner = await make_user("mapeador")
    text = (SHARED_DATA / "pense-python" / CAPITULO).read_text()
    made = await indexed_project(web_stack.base, owner, "Pense em Python", CAPITULO, text, language="pt")
    return Course(owner, *made)


def node(page: Page, label: str):  # type: ignore[no-untyped-def]
    """A node's label in the drawing (a button named by its label and passage count)."""
    return page.locator("svg.mm-svg").get_by_role("button", name=re.compile(rf"^{re.escape(label)} \("))


async def scale(page: Page) -> float:
    transform = await page.locator("svg.mm-svg [data-viewport]").get_attribute("transform") or ""
    return float(re.search(r"scale\(([\d.]+)\)", transform).group(1))  # type: ignore[union-attr]


async def saved(page: Page, button: str) -> bytes:
    async with page.expect_download() as info:
        await page.get_by_role("button", name=button).click()
    download = await info.value
    return Path(await download.path()).read_bytes()


async def test_the_map_of_a_rust_chapter(
    web_stack: WebStack, open_page: OpenPage, rust_chapter: Course, shots: Path
) -> None:
    project = rust_chapter.project_id
    page, problems = await open_page(rust_chapter.owner, f"/p/{project}/ask")
    await page.get_by_role("link", name="Mind map").click()
    await expect(page.get_by_role("heading", name="Mind map")).to_be_visible(timeout=LOAD)
    # The chapter's title is its document's node; its headings are drawn under it, open at first.
    chapter, section = "References and Borrowing", "References Are Non-Owning Pointers"
    await expect(node(page, chapter)).to_be_visible(timeout=LOAD)
    await expect(node(page, section)).to_be_visible()
    await expect(node(page, "Key concepts")).to_be_visible()
    await check(page, shots, "mindmap-desktop-en")

    # Collapse and expand by pointer, then by keyboard.
    await page.get_by_role("button", name=f"Collapse {chapter}").click()
    await expect(node(page, section)).to_have_count(0)
    await page.get_by_role("button", name=f"Expand {chapter}").click()
    await expect(node(page, section)).to_be_visible()
    toggle = page.get_by_role("button", name=f"Collapse {chapter}")
    await toggle.focus()
    await page.keyboard.press("Enter")
    await expect(node(page, section)).to_have_count(0)
    await expect(page.get_by_role("button", name=f"Expand {chapter}")).to_have_attribute(
        "aria-expanded", "false"
    )
    await page.keyboard.press("Enter")
    await expect(node(page, section)).to_be_visible()

    # A node opens its passages beside the map.
    await node(page, section).click()
    panel = page.get_by_role("complementary")
    await expect(panel.get_by_role("heading", name=section)).to_be_focused()
    await expect(panel.locator(".passages li").first).to_contain_text(
        "reference", ignore_case=True, timeout=LOAD
    )
    await expect(panel).to_contain_text(f"{chapter} › {section}")
    await check(page, shots, "mindmap-node-en")

    # The wheel and the buttons zoom; the drawing exports whole, as SVG and as PNG.
    before = await scale(page)
    await page.get_by_role("button", name="Zoom in").click()
    assert await scale(page) > before
    svg = (await saved(page, "Download SVG")).decode()
    assert svg.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in svg
    assert chapter in svg and section in svg and "tabindex" not in svg and "scale(" not in svg
    png = await saved(page, "Download PNG")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000

    # The same nodes as a nested list, for a screen reader or a keyboard.
    await page.get_by_role("button", name="As a list").click()
    listed = page.locator("ul.mm-list")
    await expect(listed.get_by_role("button", name=section, exact=True)).to_be_visible()
    await expect(listed).to_contain_text("Appears in")
    await check(page, shots, "mindmap-list-en")

    # Ask about the node: the Ask screen opens with the question written, for the reader to send.
    await page.get_by_role("link", name="Ask about this").click()
    await expect(page.get_by_label("Your question")).to_have_value(
        f"What does the material say about “{section}”?"
    )
    assert problems.errors == []


async def test_the_map_on_a_phone_pans_and_pinches(
    open_page: OpenPage, rust_chapter: Course, shots: Path
) -> None:
    page, problems = await open_page(rust_chapter.owner, f"/p/{rust_chapter.project_id}/map", phone=True)
    await expect(node(page, "References and Borrowing")).to_be_visible(timeout=LOAD)
    viewport = page.locator("svg.mm-svg [data-viewport]")
    start = await viewport.get_attribute("transform")
    box = await page.locator("svg.mm-svg").bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    # Pointer events as a touch screen sends them: one finger drags the map...
    drag = [("pointerdown", 1, x, y), ("pointermove", 1, x + 30, y + 10), ("pointermove", 1, x + 60, y + 20)]
    await page.evaluate(TOUCH, [*drag, ("pointerup", 1, x + 60, y + 20)])
    await expect(viewport).not_to_have_attribute("transform", start or "")
    before = await scale(page)
    # ...and two fingers moving apart zoom in.
    apart = [("pointerdown", 1, x - 20, y), ("pointerdown", 2, x + 20, y)]
    apart += [("pointermove", 1, x - 60, y), ("pointermove", 2, x + 60, y)]
    await page.evaluate(TOUCH, [*apart, ("pointerup", 1, x - 60, y), ("pointerup", 2, x + 60, y)])
    assert await scale(page) > before * 1.5
    await page.get_by_role("button", name="Fit").click()
    await check(page, shots, "mindmap-phone-en")
    await node(page, "References Are Non-Owning Pointers").click()
    await expect(page.get_by_role("complementary").locator(".passages li").first).to_be_visible(timeout=LOAD)
    await check(page, shots, "mindmap-phone-node-en")
    assert problems.errors == []


async def test_the_map_in_portuguese(open_page: OpenPage, capitulo: Course, shots: Path) -> None:
    page, problems = await open_page(capitulo.owner, f"/p/{capitulo.project_id}/map")
    await expect(page.get_by_role("heading", name="Mapa mental")).to_be_visible(timeout=LOAD)
    chapter, section = "Capítulo 3: Funções", "3.7 - Parâmetros e argumentos"
    await expect(node(page, chapter)).to_be_visible(timeout=LOAD)
    await expect(node(page, "Conceitos-chave")).to_be_visible()
    await expect(page.get_by_text("conceitos: termos que os títulos compartilham")).to_be_visible()
    await check(page, shots, "mindmap-desktop-pt")
    await page.get_by_role("button", name=f"Recolher {chapter}").click()
    await expect(node(page, section)).to_have_count(0)
    await page.get_by_role("button", name=f"Expandir {chapter}").click()
    await node(page, section).click()
    panel = page.get_by_role("complementary")
    await expect(panel.get_by_role("heading", name="Trechos")).to_be_visible()
    await expect(panel.locator(".passages li").first).to_contain_text("argumento", timeout=LOAD)
    svg = (await saved(page, "Baixar SVG")).decode()
    assert "Conceitos-chave" in svg and chapter in svg
    await page.get_by_role("button", name="Como lista").click()
    await check(page, shots, "mindmap-list-pt")
    phone, phone_problems = await open_page(capitulo.owner, f"/p/{capitulo.project_id}/map", phone=True)
    await expect(node(phone, chapter)).to_be_visible(timeout=LOAD)
    await check(phone, shots, "mindmap-phone-pt")
    assert problems.errors == [] and phone_problems.errors == []

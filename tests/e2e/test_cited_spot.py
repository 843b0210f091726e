"""Open the cited spot (issue 42) in Chromium: a citation's passage panel opens the stored version it
names, a PDF at the cited page with the passage highlighted in pdf.js's text layer, a scanned page and a
page photo with the passage boxed where the page prints it (the server's OCR of the page), the passage
beside it too, a slide deck at its slide (in Portuguese), a Markdown note at its section with
the passage marked, still the same version after a newer one is uploaded; on a desktop and on a phone,
axe-clean and photographed (cited-*.png). A signed-in non-member gets 404 for the file by its URL."""

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pymupdf
import pytest
from playwright.async_api import Page, expect

from benchmarks.formats.scans import THINK_PYTHON, scanned_pdf
from tests.conftest import Caller, UserFactory, add_member, wait_for_job
from tests.decks import titled_deck
from tests.e2e.conftest import LOAD, QUESTION, Course, OpenPage, WebStack, check

BUGS = "Why are programming errors called bugs?"
# Think Python's own words (its page 7 of chapter 1): what the fake model answers, so the answer's words are
# the excerpt's (an answer the excerpts do not hold is withheld, and cites nothing).
BUGS_ANSWER = (
    "For whimsical reasons, programming errors are called bugs and the process of tracking them down is "
    "called debugging."
)
# 0-based, inclusive: chapter 1 up to "1.7 Debugging", the excerpt's last page (7); its glossary, which
# names bugs too, is left out so the answer's sentence is the one retrieval ranks first.
PDF_PAGES = (20, 26)
DEBUGGING_PAGE = 26
SLIDES_PT = [
    ("Introdução", "Esta aula apresenta a linguagem Rust e o seu modelo de memória."),
    ("Posse", "Cada valor em Rust tem um dono. Só pode haver um dono por vez. "
              "Quando o dono sai do escopo, o valor é descartado."),
    ("Movimentos", "Atribuir uma String a outra variável a move: a primeira variável deixa de valer."),
]  # fmt: skip
QUESTION_PT = "O que acontece com um valor quando o dono sai do escopo?"


def pdf_excerpt() -> bytes:
    with pymupdf.open(THINK_PYTHON) as book, pymupdf.open() as out:
        out.insert_pdf(book, from_page=PDF_PAGES[0], to_page=PDF_PAGES[1])
        return out.tobytes()


def page_photo() -> bytes:
    """The Debugging page as a photographed page: a PNG, read by OCR when indexed."""
    with pymupdf.open(THINK_PYTHON) as book:
        return book[DEBUGGING_PAGE].get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")


def deck_pt() -> bytes:
    return titled_deck(SLIDES_PT)


@dataclass
class Spots:
    owner: Caller
    student: Caller  # a viewer of every project
    outsider: Caller  # a member of none
    pdf: str  # project ids
    scan: str
    photo: str
    deck: str


async def project_with(
    http: httpx.AsyncClient,
    owner: Caller,
    student: Caller,
    name: str,
    filename: str,
    content: bytes,
    lang: str,
) -> str:
    made = await http.post("/projects", json={"name": name, "language": lang}, headers=owner)
    project_id = made.json()["id"]
    files = {"file": (filename, content, "application/octet-stream")}
    accepted = await http.post(f"/projects/{project_id}/documents", files=files, headers=owner)
    assert accepted.status_code == 202, accepted.text
    job = await wait_for_job(http, owner, project_id, accepted.json()["job_id"], timeout=300)
    assert job["status"] == "succeeded", job
    await add_member(http, owner, project_id, student, "viewer")
    return project_id


@pytest.fixture(scope="module")
async def spots(web_stack: WebStack, make_user: UserFactory) -> Spots:
    owner, student, outsider = [await make_user(name) for name in ("teacher", "student", "outsider")]
    async with httpx.AsyncClient(base_url=web_stack.base, timeout=120) as http:
        pdf = await project_with(
            http, owner, student, "Think Python", "think-python-ch1.pdf", pdf_excerpt(), "en"
        )
        scan = await project_with(
            http,
            owner,
            student,
            "Scans",
            "scan.pdf",
            scanned_pdf(THINK_PYTHON, [DEBUGGING_PAGE], dpi=200),
            "en",
        )
        photo = await project_with(http, owner, student, "Photos", "page.png", page_photo(), "en")
        deck = await project_with(http, owner, student, "Rust (slides)", "aula.pptx", deck_pt(), "pt")
    return Spots(owner, student, outsider, pdf, scan, photo, deck)


@pytest.fixture
def answers_from_the_book(web_stack: WebStack) -> Iterator[None]:
    """The fake model answers with the book's sentence for this test, then as before."""
    before = web_stack.fake.answer
    web_stack.fake.answer = BUGS_ANSWER
    yield None
    web_stack.fake.answer = before


async def open_citation(page: Page, question: str, *, open_label: str = "Open in the file") -> str:
    """Asks, opens the first citation's passage panel and follows its link to the file: the chip's text."""
    await page.locator("#question").fill(question)
    await page.locator(".ask-form button[type=submit]").click()
    chip = page.locator(".msg.assistant .chip").first
    await expect(chip).to_be_visible(timeout=60_000)
    label = await chip.text_content() or ""
    await chip.click()
    await page.get_by_role("complementary").get_by_role("link", name=open_label).click()
    await expect(page.locator("#spot-title")).to_be_visible(timeout=LOAD)
    return label


async def test_a_citation_opens_the_pdf_at_its_page_with_the_passage_highlighted(
    open_page: OpenPage, spots: Spots, shots: Path, answers_from_the_book: None
) -> None:
    page, problems = await open_page(spots.student, f"/p/{spots.pdf}/ask")
    chip = await open_citation(page, BUGS)
    assert "page 7" in chip, chip
    status = page.locator(".spot-status")
    await expect(status).to_contain_text("Page 7 of 7", timeout=LOAD)
    await expect(status).to_contain_text("The cited passage is highlighted.")
    marked = page.locator(".textLayer .spot-hl")
    assert await marked.count() >= 3
    highlighted = " ".join(await marked.all_text_contents()).lower()
    assert "debugging" in highlighted and "whimsical" in highlighted
    await expect(marked.first).to_be_in_viewport()
    await expect(page.get_by_role("img", name=re.compile("^Page 7 of "))).to_be_visible()
    await check(page, shots, "cited-pdf")

    # Pages and zoom from the keyboard: the page before holds no passage; back to the cited one.
    await expect(page.get_by_role("button", name="Next page")).to_be_disabled()
    await page.get_by_role("button", name="Previous page").focus()
    await page.keyboard.press("Enter")
    await expect(status).to_contain_text("Page 6 of 7")
    await expect(status).to_contain_text("The cited passage is not on this page.")
    await page.get_by_role("button", name="Back to the cited page").click()
    await expect(status).to_contain_text("The cited passage is highlighted.")
    canvas = page.locator(".spot-sheet canvas")
    fitted = (await canvas.bounding_box() or {})["width"]
    await page.get_by_role("button", name="Zoom in").click()
    await eventually(page, lambda width: width > fitted * 1.2)
    await page.get_by_role("button", name="Fit width").click()
    await eventually(page, lambda width: abs(width - fitted) < 2)

    # On a phone: the page fits the screen's width and the passage is in view.
    phone, phone_problems = await open_page(spots.student, phone=True)
    await phone.goto(page.url)
    await expect(phone.locator(".spot-status")).to_contain_text("highlighted", timeout=LOAD)
    assert await _width(phone) <= 390
    await expect(phone.locator(".textLayer .spot-hl").first).to_be_in_viewport()
    await check(phone, shots, "cited-pdf-phone")
    assert problems.errors == [] and phone_problems.errors == []


async def _width(page: Page) -> float:
    box = await page.locator(".spot-sheet canvas").bounding_box()
    return box["width"] if box else 0.0


async def eventually(page: Page, holds: Callable[[float], bool], timeout_s: float = 10) -> None:
    """Until the drawn page's width satisfies `holds` (a zoom redraws the page a moment later)."""
    deadline = time.monotonic() + timeout_s
    while not holds(width := await _width(page)):
        assert time.monotonic() < deadline, f"the page's width stayed {width}"
        await asyncio.sleep(0.1)


def printed_line_of(word: str) -> tuple[float, float]:
    """The top and bottom of `word` on the Debugging page as the book prints it, as fractions of the page."""
    with pymupdf.open(THINK_PYTHON) as book:
        page = book[DEBUGGING_PAGE]
        box = next(pymupdf.Rect(w[:4]) for w in page.get_text("words") if w[4] == word)
        return box.y0 / page.rect.height, box.y1 / page.rect.height


async def boxed_where_printed(page: Page, drawn: str) -> None:
    """The passage's boxes lie inside the drawn page `drawn` (a canvas or an image), one over the printed
    line of the answer's sentence (its top and bottom within 1.5% of the page's height)."""
    await expect(page.locator(".spot-box").first).to_be_visible(timeout=LOAD)
    sheet = await page.locator(drawn).bounding_box()
    boxes = [await box.bounding_box() for box in await page.locator(".spot-box").all()]
    assert sheet and all(boxes)
    top, bottom = printed_line_of("whimsical")
    y, height = sheet["y"], sheet["height"]
    fractions = [((b["y"] - y) / height, (b["y"] + b["height"] - y) / height) for b in boxes if b]
    assert any(abs(y0 - top) < 0.015 and abs(y1 - bottom) < 0.015 for y0, y1 in fractions), (fractions, top)
    for b in boxes:
        assert b and sheet["x"] <= b["x"] and b["x"] + b["width"] <= sheet["x"] + sheet["width"] + 1


async def test_a_scanned_page_shows_the_passage_boxed_where_ocr_read_it(
    open_page: OpenPage, spots: Spots, shots: Path, answers_from_the_book: None
) -> None:
    page, problems = await open_page(spots.student, f"/p/{spots.scan}/ask")
    chip = await open_citation(page, BUGS)
    assert "page 1" in chip, chip
    status = page.locator(".spot-status")
    await expect(status).to_contain_text("Page 1 of 1", timeout=LOAD)
    await expect(status).to_contain_text(
        "A scanned page: the passage is highlighted where OCR read it.", timeout=LOAD
    )
    await boxed_where_printed(page, ".spot-pdf.scan .spot-sheet canvas")
    beside = page.get_by_role("complementary", name="The cited passage")
    await expect(beside.locator("blockquote")).to_contain_text("debugging")  # OCR's text of the passage
    await check(page, shots, "cited-scan")
    assert problems.errors == []


async def test_a_page_photo_shows_the_passage_boxed_where_ocr_read_it(
    open_page: OpenPage, spots: Spots, shots: Path, answers_from_the_book: None
) -> None:
    page, problems = await open_page(spots.student, f"/p/{spots.photo}/ask", phone=True)
    await open_citation(page, BUGS)
    image = page.get_by_role("img", name=re.compile("^Page 1 of "))
    await expect(image).to_be_visible(timeout=LOAD)
    drawn = "(img) => img.complete && img.naturalWidth > 500 && img.src.startsWith('blob:')"
    assert await image.evaluate(drawn)
    assert (await image.bounding_box() or {})["width"] <= 390  # fits the phone's width
    await expect(page.locator(".spot-status")).to_contain_text("the passage is highlighted where OCR read it")
    await boxed_where_printed(page, ".spot-photo img")
    beside = page.get_by_role("complementary", name="The cited passage")
    await expect(beside.locator("blockquote")).to_contain_text("debugging")
    await check(page, shots, "cited-image-phone")
    assert problems.errors == []  # the blob: image within the app's CSP


@pytest.mark.parametrize("phone", [False, True])
async def test_a_deck_opens_at_its_slide_in_portuguese(
    phone: bool, open_page: OpenPage, spots: Spots, shots: Path
) -> None:
    page, problems = await open_page(spots.student, f"/p/{spots.deck}/ask", phone=phone)
    chip = await open_citation(page, QUESTION_PT, open_label="Abrir no arquivo")
    assert "slide 2" in chip, chip
    await expect(page.get_by_role("heading", name="Slide 2", exact=True)).to_be_visible()
    await expect(page.get_by_text("Slide 2 de 3")).to_be_visible()
    # The slide drawn as it is laid out: its title above its body, the body holding the passage outlined.
    title = page.locator(".slide-render .slide-shape.title", has_text="Posse")
    body = page.locator(".slide-render .slide-shape.cited", has_text="Cada valor em Rust tem um dono")
    await expect(title).to_be_visible(timeout=LOAD)
    await expect(body).to_be_visible()
    title_box, body_box = await title.bounding_box(), await body.bounding_box()
    assert title_box and body_box and title_box["y"] + title_box["height"] <= body_box["y"] + 1
    title_size = await title.locator("p").evaluate("(p) => parseFloat(getComputedStyle(p).fontSize)")
    body_size = await body.locator("p").first.evaluate("(p) => parseFloat(getComputedStyle(p).fontSize)")
    assert title_size > body_size > 6  # the deck's 44 and 32 points, scaled to the drawn slide
    mark = page.locator(".spot-text mark", has_text="Cada valor em Rust tem um dono")
    await expect(mark).to_be_in_viewport()
    await expect(page.locator(".spot-text")).not_to_contain_text("Movimentos")  # that slide's text only
    await expect(
        page.get_by_role("status").filter(has_text="O trecho citado está destacado.")
    ).to_be_visible()
    await check(page, shots, "cited-deck-pt" + ("-phone" if phone else ""))
    await page.get_by_role("button", name="Próximo slide").click()
    await expect(page.get_by_text("Slide 3 de 3")).to_be_visible()
    await expect(page.locator(".spot-text")).to_contain_text("Atribuir uma String")
    await expect(page.locator(".spot-text mark")).to_have_count(0)
    await expect(page.locator(".slide-render .slide-shape.title")).to_have_text("Movimentos")
    await expect(page.locator(".slide-render .slide-shape.cited")).to_have_count(0)
    assert problems.errors == []


async def test_a_note_opens_at_its_section_and_keeps_its_version(
    web_stack: WebStack, open_page: OpenPage, course: Course, shots: Path
) -> None:
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/ask")
    await open_citation(page, QUESTION)
    assert "/v/1?" in page.url
    await expect(page.locator(".spot-text mark", has_text="Each value in Rust has an owner")).to_be_visible()
    await expect(page.locator(".spot-text h2").first).to_have_text("The rules")  # Markdown, rendered
    mark = page.locator(".spot-text mark.spot-mark").first
    await page.get_by_role("button", name="Go to the passage").click()
    await expect(mark).to_be_focused()
    await check(page, shots, "cited-text")

    # A newer version: the old citation still opens the version it read, and says a newer one exists.
    async with httpx.AsyncClient(base_url=web_stack.base, headers=course.owner, timeout=60) as http:
        url = f"/projects/{course.project_id}/documents/{course.document_id}"
        revised = await http.patch(url, json={"content": "# Ownership\n\nRewritten from scratch.\n"})
        assert revised.status_code == 202, revised.text
        job = await wait_for_job(http, {}, course.project_id, revised.json()["job_id"])
        assert job["status"] == "succeeded", job
    await page.reload()
    await expect(page.locator(".spot-text mark", has_text="Each value in Rust has an owner")).to_be_visible(
        timeout=LOAD
    )
    await expect(page.get_by_text("the document has a newer version (2)")).to_be_visible()
    assert problems.errors == []


async def test_a_non_member_gets_404_for_the_file(
    web_stack: WebStack, open_page: OpenPage, spots: Spots
) -> None:
    async with httpx.AsyncClient(base_url=web_stack.base, headers=spots.student, timeout=60) as http:
        documents = (await http.get(f"/projects/{spots.pdf}/documents")).json()
    member, _ = await open_page(spots.student, f"/p/{spots.pdf}/documents")
    file = f"/projects/{spots.pdf}/documents/{documents[0]['id']}/versions/1/file"
    fetch = """async (url) => {
        const key = sessionStorage.getItem('studyai.key');
        const r = await fetch(url, {headers: {Authorization: `Bearer ${key}`}});
        return [r.status, r.headers.get('content-type')];
      }"""
    assert await member.evaluate(fetch, file) == [200, "application/pdf"]
    page, problems = await open_page(spots.outsider)
    assert (await page.evaluate(fetch, file))[0] == 404
    await page.goto(f"{web_stack.base}/app/#/p/{spots.pdf}/doc/{documents[0]['id']}/v/1?page=7")
    await expect(page.get_by_role("alert")).to_contain_text("not found", timeout=LOAD)
    await expect(page.locator(".spot-sheet")).to_have_count(0)
    assert problems.expected("status of 404") == []

"""A whole course in Chromium: a folder chosen with the folder picker (Markdown files in subfolders, a
file the server refuses and a broken PDF) goes up as one batch, and its one summary row reaches "5 of 6
ready · 1 failed · 1 refused" with the failed and the refused file and their reasons; the documents are
listed by their paths in the folder. A folder
dropped on the page (read entry by entry, its listing answered in pieces) becomes one batch too, and a
course ZIP picked with the file chooser becomes one, in Portuguese ("3 de 3 prontos"). A PowerPoint
deck's chunks say "slide 2", not "page 2". The batch summary passes axe-core and is photographed in both
languages (24-course-upload, 24-course-upload-pt)."""

import io
import zipfile
from pathlib import Path

import httpx
from playwright.async_api import Page, expect
from pptx import Presentation

from tests.conftest import Caller, UserFactory
from tests.e2e.conftest import OpenPage, PageProblems, WebStack, check

# A course folder: Markdown in subfolders, and a program that is no course material (refused, with why).
COURSE_FILES = {
    "syllabus.md": ("Syllabus", "Twelve weeks of systems programming in Rust, one lab a week."),
    "week1/intro.md": ("Introduction", "Rust is a systems language with memory safety and no collector."),
    "week1/ownership.md": ("Ownership", "Each value has one owner; it is dropped with its owner."),
    "week2/borrowing.md": ("Borrowing", "A reference borrows a value: many shared or one mutable."),
    "week2/labs/lifetimes.md": ("Lifetimes", "A lifetime names how long a reference stays valid."),
}
REFUSED = "week2/labs/grader"
BROKEN = "week2/slides.pdf"  # a PDF by its header, not one by its body: taken, then fails indexing
ELF = b"\x7fELF\x02\x01\x01" + bytes(200)


async def new_project(base: str, owner: Caller, name: str, language: str = "en") -> str:
    async with httpx.AsyncClient(base_url=base, headers=owner, timeout=60) as http:
        response = await http.post("/projects", json={"name": name, "language": language})
        assert response.status_code == 201, response.text
        return response.json()["id"]


async def documents_page(
    open_page: OpenPage, web_stack: WebStack, make_user: UserFactory, language: str
) -> tuple[Page, PageProblems]:
    owner = await make_user("teacher")
    project = await new_project(web_stack.base, owner, f"Course upload ({language})", language)
    page, problems = await open_page(owner, f"/p/{project}/documents")
    await expect(page.locator("#folder-input")).to_be_attached()
    return page, problems


async def titles_ready(page: Page, titles: list[str], ready: str = "Ready") -> None:
    for title in titles:
        row = page.locator(f'tr[data-document="{title}"]')
        await expect(row.locator(".badge")).to_have_text(ready, timeout=30_000)


async def test_folder_upload_is_one_batch(
    web_stack: WebStack, open_page: OpenPage, make_user: UserFactory, tmp_path: Path, shots: Path
) -> None:
    folder = tmp_path / "rust-course"
    for path, (title, text) in COURSE_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(f"# {title}\n\n{text}\n")
    (folder / REFUSED).write_bytes(ELF)
    (folder / BROKEN).write_bytes(b"%PDF-1.7\n" + bytes(300))
    page, problems = await documents_page(open_page, web_stack, make_user, "en")
    await expect(page.get_by_text("PowerPoint, Word, Excel, EPUB, web pages")).to_be_visible()
    accept = await page.locator("#upload-input").get_attribute("accept") or ""
    assert {".pptx", ".docx", ".xlsx", ".epub", ".html", ".png", ".tiff", ".zip"} <= set(accept.split(","))

    requests: list[str] = []
    page.on("request", lambda r: "/documents" in r.url and r.method == "POST" and requests.append(r.url))
    await page.locator("#folder-input").set_input_files(folder)
    batch = page.get_by_test_id("course-batch")
    await expect(batch).to_contain_text("Course: rust-course")
    summary = batch.locator(".batch-summary")
    await expect(summary).to_have_text("5 of 6 ready · 1 failed · 1 refused", timeout=180_000)
    await expect(batch).to_have_attribute("data-status", "done")
    assert len(requests) == 1 and "/documents/batch" in requests[0]  # one request, not one per file

    await batch.get_by_text("Files with problems (2)").click()
    await expect(batch.locator(".batch-failed li")).to_contain_text("rust-course/week2/slides:")
    refused = batch.locator(".batch-refused li")
    await expect(refused).to_have_count(1)
    await expect(refused).to_contain_text(f"rust-course/{REFUSED}")
    await expect(refused).to_contain_text("program")
    # The documents list reloads: each document titled by its path in the folder.
    await titles_ready(page, [f"rust-course/{p.removesuffix('.md')}" for p in COURSE_FILES])
    await check(page, shots, "24-course-upload")
    assert problems.errors == []


async def test_dropped_folder_is_read_entry_by_entry(
    web_stack: WebStack, open_page: OpenPage, make_user: UserFactory
) -> None:
    """Playwright cannot drag a real folder; the drop carries the entries a browser gives for one
    (webkitGetAsEntry), each folder's listing answered in pieces as Chromium does."""
    page, problems = await documents_page(open_page, web_stack, make_user, "en")
    await page.evaluate(
        """() => {
          const file = (name, text) => ({ isFile: true, isDirectory: false, name,
            file: (ok) => ok(new File([text], name, { type: 'text/markdown' })) });
          const dir = (name, children) => ({ isFile: false, isDirectory: true, name, createReader: () => {
            const pieces = [children.slice(0, 1), children.slice(1)].filter((p) => p.length);
            return { readEntries: (ok) => setTimeout(() => ok(pieces.shift() || []), 0) };
          } });
          const folder = dir('notes', [
            file('a.md', '# Stack\\n\\nThe stack holds values of a known, fixed size.'),
            dir('heap', [file('b.md', '# Heap\\n\\nThe heap holds values whose size is known at run time.'),
                         dir('deep', [file('c.md', '# Box\\n\\nA Box puts its value on the heap.')])]),
          ]);
          const drop = new Event('drop', { bubbles: true, cancelable: true });
          const item = { kind: 'file', webkitGetAsEntry: () => folder, getAsFile: () => null };
          Object.defineProperty(drop, 'dataTransfer', { value: { items: [item], files: [] } });
          document.querySelector('[data-testid=dropzone]').dispatchEvent(drop);
        }"""
    )
    batch = page.get_by_test_id("course-batch")
    await expect(batch).to_contain_text("Course: notes")
    await expect(batch.locator(".batch-summary")).to_have_text("3 of 3 ready", timeout=180_000)
    await titles_ready(page, ["notes/a", "notes/heap/b", "notes/heap/deep/c"])
    assert problems.errors == []


async def test_course_zip_in_portuguese(
    web_stack: WebStack, open_page: OpenPage, make_user: UserFactory, tmp_path: Path, shots: Path
) -> None:
    archive = tmp_path / "curso.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("curso/", "")
        zipped.writestr("curso/aula1/posse.md", "# Posse\n\nCada valor tem um dono e sai com ele.\n")
        zipped.writestr("curso/aula2/empréstimo.md", "# Empréstimo\n\nUma referência empresta um valor.\n")
        zipped.writestr("curso/leia.txt", "Leia as aulas na ordem.\n")
        zipped.writestr("curso/programa.bin", ELF)
        zipped.writestr("curso/.DS_Store", b"\x00\x00\x00\x01Bud1")  # the system's, left out silently
    page, problems = await documents_page(open_page, web_stack, make_user, "pt")
    await expect(page.get_by_text("PowerPoint, Word, Excel, EPUB, páginas web")).to_be_visible()
    await page.locator("#upload-input").set_input_files(archive)
    batch = page.get_by_test_id("course-batch")
    await expect(batch).to_contain_text("Curso: curso.zip")
    summary = batch.locator(".batch-summary")
    await expect(summary).to_have_text("3 de 3 prontos · recusados: 1", timeout=180_000)
    await batch.get_by_text("Arquivos com problemas (1)").click()
    await expect(batch.locator(".batch-refused li")).to_contain_text("curso/programa.bin")
    await expect(page.locator("li.upload:not(.batch)")).to_have_count(0)  # the ZIP is not a document
    await titles_ready(page, ["curso/aula1/posse", "curso/aula2/empréstimo", "curso/leia"], "Pronto")
    await check(page, shots, "24-course-upload-pt")
    assert problems.errors == []


def deck() -> bytes:
    """Three slides, each long enough (over the chunker's 200-character minimum) to be its own chunk."""
    presentation = Presentation()
    layout = presentation.slide_layouts[1]  # title and content
    for title, body in [
        ("Memory", "Programs keep their data on the stack or on the heap."),
        ("Ownership rules", "Each value has exactly one owner at a time."),
        ("Moves", "Assigning a String moves it; the first variable is no longer valid."),
    ]:
        slide = presentation.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text = " ".join([body] * 6)
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


async def test_a_deck_cites_slides(
    web_stack: WebStack, open_page: OpenPage, make_user: UserFactory, tmp_path: Path
) -> None:
    (tmp_path / "lecture.pptx").write_bytes(deck())
    page, problems = await documents_page(open_page, web_stack, make_user, "en")
    await page.locator("#upload-input").set_input_files(tmp_path / "lecture.pptx")
    await expect(page.locator("li.upload")).to_contain_text("lecture.pptx")  # a loose file: its own row
    row = page.locator("tr[data-document=lecture]")
    await expect(row.locator(".badge")).to_have_text("Ready", timeout=120_000)
    await expect(row).to_contain_text("PowerPoint")
    await row.get_by_role("link", name="Chunks").click()
    chunk = page.locator(".chunk", has_text="exactly one owner")
    await expect(chunk).to_have_count(1)
    await expect(chunk.locator(".meta")).to_contain_text("slide 2")
    await expect(page.locator(".chunk .meta", has_text="page ")).to_have_count(0)
    assert problems.errors == []

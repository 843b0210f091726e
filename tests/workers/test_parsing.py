"""Parsing real documents (Think Python PDF, Rust book, Pense em Python) and hostile inputs."""

import os
import re
import time
from pathlib import Path

import pymupdf
import pytest

from core.settings.parsing import ParseSettings
from tests.workers.pdf_bombs import glyph_bomb_pdf, many_pages_pdf, offpage_bomb_pdf
from workers.chunking.sections import HEADER_MAX_CHARS, chunk_document
from workers.parsing import ParsedDocument, ParseError, parse_document
from workers.parsing.bounded import parse_bounded
from workers.parsing.markdown import parse_markdown, parse_text
from workers.parsing.pdf import parse_pdf
from workers.parsing.types import HEADING_MAX_CHARS

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
THINK_PYTHON = DATA / "thinkpython2" / "thinkpython2.pdf"
RUST = DATA / "rust-book" / "src"
BAD = DATA / "bad-inputs"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="shared test data not present")


@pytest.fixture(scope="module")
def think_python() -> ParsedDocument:
    return parse_pdf(THINK_PYTHON.read_bytes(), filename=THINK_PYTHON.name)


@pytest.fixture(scope="module")
def outline() -> list[list]:
    with pymupdf.open(THINK_PYTHON) as doc:
        return doc.get_toc()


def outline_paths(toc: list[list]) -> dict[tuple[str, ...], list[int]]:
    """Heading path -> target pages (a chapter can have two "Exercises")."""
    paths: dict[tuple[str, ...], list[int]] = {}
    stack: list[str] = []
    for level, title, page in toc:
        stack = [*stack[: level - 1], title]
        paths.setdefault(tuple(stack), []).append(page)
    return paths


def assert_offsets_consistent(doc: ParsedDocument) -> None:
    for section in doc.sections:
        assert doc.text[section.char_start : section.char_end] == section.text
    starts = [section.char_start for section in doc.sections]
    assert starts == sorted(starts)


def atx_headings(source: str) -> list[tuple[int, str]]:
    """(level, title) of ATX headings outside fenced code, in order."""
    headings, fenced = [], False
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^(#{1,6})\s+(.+?)\s*#*\s*$", line)):
            headings.append((len(match.group(1)), match.group(2).strip()))
    return headings


# PDF -------------------------------------------------------------------------------------------


def test_pdf_sections_follow_the_outline(think_python: ParsedDocument, outline: list[list]) -> None:
    toc = outline
    paths = outline_paths(toc)
    assert think_python.page_count == 288
    assert think_python.title == "thinkpython2"
    assert think_python.source_type == "pdf" and len(think_python.page_offsets) == 288
    headed = [section for section in think_python.sections if section.path]
    assert all(section.path in paths for section in headed)
    assert len(headed) >= len(toc) - 5  # (nearly) every entry found
    assert think_python.sections[0].path == ()  # title pages before "Preface"
    pages = [section.page_start for section in think_python.sections]
    assert pages == sorted(pages)
    for section in think_python.sections:
        assert 1 <= section.page_start <= section.page_end <= 288
    for section in headed:  # the target page, or the next one when a page break pushed the heading
        targets = paths[section.path]
        assert section.page_start in targets or section.page_start - 1 in targets, section.path
    assert_offsets_consistent(think_python)


def test_pdf_known_headings_land_on_their_pages(think_python: ParsedDocument, outline: list[list]) -> None:
    by_path = {section.path: section for section in think_python.sections}
    paths = outline_paths(outline)
    first = by_path[("The way of the program", "What is a program?")]
    assert first.page_start == 21 and paths[first.path] == [21]
    assert first.text.startswith("1.1. What is a program?\nA program is a sequence of instructions")
    # Page 27 starts with the running header "1.7. Debugging\n7"; the section starts at the real heading.
    debugging = by_path[("The way of the program", "Debugging")]
    assert debugging.page_start == 27
    assert debugging.text.startswith("1.7. Debugging\nProgrammers make mistakes.")
    # The outline says page 32 but the heading was pushed to the top of page 33.
    expressions = by_path[("Variables, expressions and statements", "Expressions and statements")]
    assert expressions.page_start == 33 and expressions.text.startswith("2.3. Expressions and statements\nAn")
    chapter = by_path[("Variables, expressions and statements",)]
    assert chapter.text.startswith("Chapter2\nVariables, expressions and\nstatements\n")  # wrapped title
    appendix = by_path[("Analysis of Algorithms",)]
    assert appendix.page_start == 261 and appendix.text.startswith("AppendixB\nAnalysis of Algorithms")


def test_pdf_parses_fast_and_takes_the_given_title() -> None:
    data = THINK_PYTHON.read_bytes()
    started = time.perf_counter()
    doc = parse_document(data, source_type="pdf", filename="book.pdf", title="  Think Python  ")
    assert time.perf_counter() - started < 2.0
    assert doc.title == "Think Python"
    assert "ﬁ" not in doc.text  # ligatures expanded for search
    assert "\n\n\n" not in doc.text and " \n" not in doc.text


def test_pdf_without_outline_uses_font_sizes() -> None:
    doc = pymupdf.open()
    line = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor."
    layout = [
        [(20, "Introduction"), *[(11, line)] * 8, (15, "Background"), *[(11, line)] * 6],
        [*[(11, line)] * 5, (15, "Related work"), *[(11, line)] * 5, (20, "Methods"), *[(11, line)] * 4],
    ]
    for items in layout:
        page, y = doc.new_page(), 72.0
        for size, text in items:
            page.insert_text((72, y), text, fontsize=size)
            y += size * 1.6
    parsed = parse_pdf(doc.tobytes(), filename="paper.pdf")
    assert [(s.path, s.page_start, s.page_end) for s in parsed.sections] == [
        (("Introduction",), 1, 1),
        (("Introduction", "Background"), 1, 2),
        (("Introduction", "Related work"), 2, 2),
        (("Methods",), 2, 2),
    ]
    assert parsed.sections[1].text.startswith("Background\nLorem ipsum")
    assert parsed.title == "paper"
    assert_offsets_consistent(parsed)


def test_pdf_unreadable_pages_are_skipped_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = pymupdf.open()
    for number in range(1, 6):
        doc.new_page().insert_text((72, 72), f"Text of page {number}.")
    data = doc.tobytes()
    real_get_text = pymupdf.Page.get_text

    def flaky_get_text(page: pymupdf.Page, *args: object, **kwargs: object) -> object:
        if page.number in (1, 2):
            raise RuntimeError("simulated broken content stream")
        return real_get_text(page, *args, **kwargs)

    monkeypatch.setattr(pymupdf.Page, "get_text", flaky_get_text)
    parsed = parse_pdf(data, filename="flaky.pdf")
    assert parsed.warnings == ["pages 2-3 could not be read and were left out"]
    assert "page 2" not in parsed.text and "Text of page 4." in parsed.text
    assert parsed.page_count == 5
    section = parsed.sections[0]
    assert (section.page_start, section.page_end) == (1, 5)


# Markdown and text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["ch03-02-data-types.md", "ch04-01-what-is-ownership.md", "ch09-00-error-handling.md"]
)
def test_rust_chapter_sections_match_its_headings(name: str) -> None:
    source = (RUST / name).read_text(encoding="utf-8")
    doc = parse_markdown(source.encode(), filename=name)
    headings = atx_headings(source)
    assert [section.path[-1] for section in doc.sections if section.path] == [title for _, title in headings]
    assert all(section.text.startswith("#") for section in doc.sections if section.path)
    # path = the enclosing headings by level
    stack: list[tuple[int, str]] = []
    for (level, title), section in zip(headings, [s for s in doc.sections if s.path], strict=True):
        stack = [*[item for item in stack if item[0] < level], (level, title)]
        assert section.path == tuple(t for _, t in stack)
    assert_offsets_consistent(doc)


def test_markdown_structure_rules() -> None:
    source = (
        "Intro before any heading.\n\n"
        "Setext Title\n============\n\nBody.\n\n"
        "## Part `one`\n\n- item\n  # not a section (inside a list)\n\n"
        "#### Deep\n\ntext\n\n"
        "Second\n------\n\n```\n# not a heading either\n```\n"
    )
    doc = parse_markdown(source.encode(), filename="notes/guide.md")
    assert [section.path for section in doc.sections] == [
        (),
        ("Setext Title",),
        ("Setext Title", "Part `one`"),
        ("Setext Title", "Part `one`", "Deep"),
        ("Setext Title", "Second"),
    ]
    assert doc.title == "Setext Title"
    assert doc.sections[4].text.endswith("```\n# not a heading either\n```")
    assert parse_markdown(b"## Only h2\n\ntext", filename="notes/guide.md").title == "guide"
    assert parse_markdown(b"# H\n", filename="g.md", title="Given").title == "Given"
    assert_offsets_consistent(doc)


def test_text_is_one_section_with_newlines_normalised() -> None:
    doc = parse_text(b"\xef\xbb\xbfFirst line\r\n# not a heading\r\n\r\nEnd\r", filename="notes.txt")
    assert doc.title == "notes"
    assert doc.text == "First line\n# not a heading\n\nEnd\n"
    assert [(s.path, s.text) for s in doc.sections] == [((), "First line\n# not a heading\n\nEnd")]


def test_portuguese_keeps_accents() -> None:
    path = DATA / "pense-python" / "03-funcoes.md"
    doc = parse_document(path.read_bytes(), source_type="markdown", filename=path.name)
    assert "função" in doc.text and "é" in doc.text
    assert any("ç" in title or "õ" in title for section in doc.sections for title in section.path)
    assert_offsets_consistent(doc)


def test_unknown_source_type_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="Unsupported document type"):
        parse_document(b"x", source_type="rtf", filename="a.rtf")


# Hostile inputs (bad-inputs/README.md) ---------------------------------------------------------

REJECTED = {
    "empty.pdf": "empty",
    "encrypted.pdf": "password-protected",
    "image-only.pdf": "No text was found.*OCR recognised no text",
    "not-a-pdf.pdf": "not a PDF",
    "latin1.md": "not valid UTF-8",
    "binary.md": "is not text",
    "only-whitespace.md": "no text to index",
}


@pytest.mark.parametrize(("name", "reason"), sorted(REJECTED.items()))
def test_bad_input_is_rejected_with_a_reason(name: str, reason: str) -> None:
    source_type = "pdf" if name.endswith(".pdf") else "markdown"
    with pytest.raises(ParseError, match=reason):
        parse_document((BAD / name).read_bytes(), source_type=source_type, filename=name)


def test_truncated_pdf_fails_cleanly_or_keeps_readable_pages() -> None:
    try:
        doc = parse_document((BAD / "truncated.pdf").read_bytes(), source_type="pdf", filename="t.pdf")
    except ParseError as error:
        assert "damaged or incomplete" in str(error)
    else:
        assert doc.sections and doc.warnings


def test_nul_bytes_are_removed_with_a_warning() -> None:
    doc = parse_document((BAD / "nul-bytes.md").read_bytes(), source_type="markdown", filename="nul-bytes.md")
    assert "\x00" not in doc.text and "Some text" in doc.text
    assert doc.warnings and "NUL" in doc.warnings[0]


def test_many_headers_parse_in_reasonable_time() -> None:
    started = time.perf_counter()
    doc = parse_document((BAD / "many-headers.md").read_bytes(), source_type="markdown", filename="m.md")
    assert time.perf_counter() - started < 5.0
    assert len(doc.sections) == 20000
    assert doc.sections[5].path == tuple(f"Heading {n}" for n in range(6))


@pytest.mark.parametrize("name", ["deep-nesting.md", "huge-line.md"])
def test_deep_and_huge_markdown_parse(name: str) -> None:
    doc = parse_document((BAD / name).read_bytes(), source_type="markdown", filename=name)
    assert doc.sections
    assert_offsets_consistent(doc)


# Bounds (issue 11, part 1): what the worker parses, through workers/parsing/bounded.py --------------

LIMITS = ParseSettings(max_pages=2000, max_chars=20_000_000, timeout_s=120, max_memory_mb=2048)
BOMB_MEMORY_MB = 384


def parse_children() -> list[int]:
    """Pids of this process's parsing children still alive (or not yet reaped)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and b"workers.parsing.child import main" in cmdline:
            pids.append(int(stat.parent.name))
    return pids


async def parse_pdf_bounded(data: bytes, limits: ParseSettings, filename: str = "file.pdf") -> ParsedDocument:
    return await parse_bounded(data, source_type="pdf", filename=filename, title=None, limits=limits)


async def test_pdf_parsed_in_a_child_is_the_same_document(think_python: ParsedDocument) -> None:
    assert await parse_pdf_bounded(THINK_PYTHON.read_bytes(), LIMITS, THINK_PYTHON.name) == think_python


async def test_pdf_over_the_page_bound_fails_with_the_reason() -> None:
    limits = LIMITS.model_copy(update=dict(max_pages=20))
    with pytest.raises(ParseError, match="30 pages, more than the 20 pages allowed"):
        await parse_pdf_bounded(many_pages_pdf(30), limits)
    assert (await parse_pdf_bounded(many_pages_pdf(20), limits)).page_count == 20


@pytest.mark.parametrize(("name", "source_type"), [("thinkpython2.pdf", "pdf"), ("huge-line.md", "markdown")])
async def test_text_over_the_char_bound_fails_with_the_reason(name: str, source_type: str) -> None:
    data = (THINK_PYTHON if source_type == "pdf" else BAD / name).read_bytes()
    limits = LIMITS.model_copy(update=dict(max_chars=100_000))
    with pytest.raises(ParseError, match="more than 100,000 characters"):
        await parse_bounded(data, source_type=source_type, filename=name, title=None, limits=limits)


async def test_pdf_memory_bomb_fails_with_the_reason_and_the_next_file_parses() -> None:
    limits = LIMITS.model_copy(update=dict(max_memory_mb=BOMB_MEMORY_MB))
    bomb = glyph_bomb_pdf()
    assert len(bomb) < 1024 * 1024  # small on disk: the cost is in parsing it
    with pytest.raises(
        ParseError, match=re.escape(f"needs more memory than allowed to parse ({BOMB_MEMORY_MB} MB)")
    ):
        await parse_pdf_bounded(bomb, limits)
    assert not parse_children()
    # The same bound leaves room for an ordinary book.
    parsed = await parse_pdf_bounded(THINK_PYTHON.read_bytes(), limits)
    assert parsed.page_count and parsed.page_count > 200


async def test_pdf_parse_timeout_kills_the_child() -> None:
    started = time.monotonic()
    with pytest.raises(ParseError, match=re.escape("parsing took longer than 1.5 s and was stopped")):
        await parse_pdf_bounded(offpage_bomb_pdf(), LIMITS.model_copy(update=dict(timeout_s=1.5)))
    assert time.monotonic() - started < 60  # generous: the child is killed at the bound, not at its end
    assert not parse_children()


def test_a_1mb_heading_is_not_copied_into_every_chunk() -> None:
    heading = "Ownership " * 100_000
    text = f"# {heading}\n\n## Moves\n\n" + "A value moves to its new owner. " * 500
    doc = parse_markdown(text.encode(), filename="huge-heading.md")
    assert all(len(part) <= HEADING_MAX_CHARS for section in doc.sections for part in section.path)
    assert len(doc.title) <= HEADING_MAX_CHARS
    chunks = chunk_document(doc)
    assert len(chunks) > 100
    assert all(len(chunk.context_header) <= HEADER_MAX_CHARS for chunk in chunks)
    assert all(len(part) <= HEADING_MAX_CHARS for chunk in chunks for part in chunk.section_path)
    assert sum(len(chunk.text) for chunk in chunks) >= len(heading)  # the text keeps the heading itself
    assert sum(len(chunk.embed_text) for chunk in chunks) < 2 * len(text)  # not len(heading) per chunk

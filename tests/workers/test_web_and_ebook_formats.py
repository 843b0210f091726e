"""Saved web pages (HTML) and e-books (EPUB): main content only, headings as sections, hostile input
ending in a ParseError with a reason."""

import time

import pytest

from core.settings.parsing import ParseSettings
from tests.workers import web_ebook_inputs as inputs
from workers.chunking.sections import ChunkingConfig, chunk_document
from workers.parsing import ParsedDocument, ParseError, parse_document
from workers.parsing.bounded import parse_bounded
from workers.parsing.epub import parse_epub
from workers.parsing.html import parse_html

LIMITS = ParseSettings(max_pages=100, max_chars=10**6, timeout_s=60, max_memory_mb=1024)


def assert_offsets_consistent(doc: ParsedDocument) -> None:
    for section in doc.sections:
        assert doc.text[section.char_start : section.char_end] == section.text
        assert section.page_start is None and section.page_end is None
    assert doc.page_offsets == ()


# HTML -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [inputs.SEMANTIC_PAGE, inputs.DIV_PAGE], ids=["semantic", "divs-only"])
def test_web_page_keeps_the_main_content_with_its_structure(page: str) -> None:
    doc = parse_html(page.encode(), filename="ownership.html")
    assert doc.title == "Ownership in Rust"  # og:title, not "<title> | site"
    for furniture in inputs.BOILERPLATE:
        assert furniture not in doc.text
    assert [section.path for section in doc.sections] == [
        ("Ownership in Rust",),
        ("Ownership in Rust", "Moves"),
        ("Ownership in Rust", "Moves", "Copy types"),
        ("Ownership in Rust", "Borrowing rules"),
    ]
    assert f"```rust\n{inputs.CODE}\n```" in doc.text  # indentation, the tab and `<world>` intact
    assert (
        "| Reference | How many at once |\n| --- | --- |\n| &T shared | any number |\n"
        "| &mut T exclusive | exactly one |"
    ) in doc.text
    assert "- All integer types, such as u32\n- The Boolean type, bool\n- Tuples of Copy types" in doc.text
    assert "implement `Copy`, so" in doc.text
    assert_offsets_consistent(doc)


def test_web_page_chunks_cite_its_headings() -> None:
    doc = parse_document(inputs.SEMANTIC_PAGE.encode(), source_type="html", filename="ownership.html")
    chunks = chunk_document(doc, ChunkingConfig(max_chars=1200, min_chars=0))
    code_chunk = next(chunk for chunk in chunks if "String::from" in chunk.text)
    assert code_chunk.section_path == ("Ownership in Rust", "Moves")
    assert code_chunk.context_header == "Ownership in Rust > Ownership in Rust > Moves"
    assert all(chunk.page_start is None for chunk in chunks)


@pytest.mark.parametrize("charset", ["utf-8", "iso-8859-1"])
def test_portuguese_accents_survive_the_declared_charset(charset: str) -> None:
    page = inputs.PORTUGUESE_PAGE.format(charset=charset)
    doc = parse_html(page.encode("latin-1" if charset != "utf-8" else "utf-8"), filename="aula.html")
    assert doc.title == "Programação em Python"
    for words in inputs.PORTUGUESE_WORDS:
        assert words in doc.text
    assert "Início" not in doc.text and "Política" not in doc.text
    assert [section.path[-1] for section in doc.sections] == ["Introdução à programação", "Funções e ações"]


def test_undeclared_charset_is_utf8_else_windows_1252() -> None:
    page = inputs.PORTUGUESE_PAGE.replace('<meta charset="{charset}">', "")
    assert "coração" in parse_html(page.encode(), filename="a.html").text
    assert "coração" in parse_html(page.encode("cp1252"), filename="a.html").text


def test_title_falls_back_to_the_filename() -> None:
    page = b"<html><body><p>Only a paragraph of text, and no title anywhere on the page.</p></body></html>"
    assert parse_html(page, filename="notes-week-3.html").title == "notes-week-3"
    assert parse_html(page, filename="notes.html", title="Given").title == "Given"


@pytest.mark.parametrize(
    "page",
    [inputs.BOILERPLATE_ONLY_PAGE.encode(), b"<html><body>  </body></html>", b""],
    ids=["boilerplate-only", "blank-body", "empty"],
)
def test_web_page_without_main_text_fails_with_the_reason(page: bytes) -> None:
    with pytest.raises(ParseError, match=r"no main text|cannot be read as HTML"):
        parse_html(page, filename="home.html")


def test_deeply_nested_page_parses_quickly() -> None:
    started = time.monotonic()
    try:
        doc = parse_html(inputs.deeply_nested_page(), filename="deep.html")
    except ParseError as error:  # an acceptable outcome, as long as it gives a reason
        assert str(error)
    else:
        assert "A paragraph before the nesting" in doc.text
    assert time.monotonic() - started < 10


# EPUB -------------------------------------------------------------------------------------------------


def test_epub_chapters_in_spine_order_with_headings_as_sections() -> None:
    doc = parse_epub(inputs.build_epub(), filename="rust.epub")
    assert doc.title == "The Rust Book"
    assert doc.page_count is None
    assert [section.path for section in doc.sections] == [
        ("1. Ownership",),
        ("1. Ownership", "Moves"),
        ("1. Ownership", "Moves", "Copy types"),
        ("Borrowing",),
        ("Borrowing", "Rules"),
        ("Chapter 3: Lifetimes",),
        ("Chapter 3: Lifetimes", "Elision"),
    ]
    assert "```\nlet x = 5;\nlet y = x;\n```" in doc.text
    assert "References borrow a value." in doc.text  # the HTML fallback knew &nbsp; (a space here)
    assert "Contents" not in doc.text  # the nav document is the TOC, not a chapter
    assert_offsets_consistent(doc)
    chunks = chunk_document(doc, ChunkingConfig(max_chars=1200, min_chars=0))
    assert [chunk.section_path for chunk in chunks] == [section.path for section in doc.sections]
    assert chunks[1].context_header == "The Rust Book > 1. Ownership > Moves"
    assert all(chunk.page_start is None and chunk.page_end is None for chunk in chunks)


def test_epub_title_is_given_else_opf_else_filename() -> None:
    assert parse_epub(inputs.build_epub(), filename="a.epub", title="Mine").title == "Mine"
    untitled = inputs.build_epub(package=inputs.opf(title=""))
    assert parse_epub(untitled, filename="rust-book.epub").title == "rust-book"


def test_epub_font_obfuscation_is_no_drm() -> None:
    book = inputs.build_epub(extra={"META-INF/encryption.xml": inputs.FONT_OBFUSCATION})
    assert parse_epub(book, filename="a.epub").sections


@pytest.mark.parametrize(
    ("book", "reason"),
    [
        (inputs.build_epub({**inputs.CHAPTERS, "ch2": inputs.XXE_CHAPTER}), "declares XML entities"),
        (inputs.build_epub(package=inputs.opf(doctype=inputs.BILLION_LAUGHS, title="&a9;")), "entities"),
        (inputs.build_epub()[:-200], "damaged"),
        (inputs.build_epub(extra={"META-INF/encryption.xml": inputs.DRM_ENCRYPTION}), "encrypted"),
        (inputs.build_epub({name: inputs.chapter("") for name in inputs.CHAPTERS}), "no text"),
    ],
    ids=["xxe-chapter", "billion-laughs-opf", "truncated", "drm", "no-text"],
)
def test_hostile_or_broken_epub_fails_with_the_reason(book: bytes, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as caught:
        parse_epub(book, filename="book.epub")
    assert "root:" not in str(caught.value)


# Through the bounded child ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source_type", "data"),
    [("html", inputs.DIV_PAGE.encode()), ("epub", inputs.build_epub())],
)
async def test_parsed_in_the_bounded_child_like_in_process(source_type: str, data: bytes) -> None:
    # The div page makes the child import trafilatura (about 20 MB of address space in all, measured).
    filename = f"file.{source_type}"
    doc = await parse_bounded(data, source_type=source_type, filename=filename, title=None, limits=LIMITS)
    assert doc == parse_document(data, source_type=source_type, filename=filename, max_chars=LIMITS.max_chars)
    assert doc.sections and all(section.page_start is None for section in doc.sections)

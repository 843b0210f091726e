"""PDF into page-numbered, heading-delimited sections (pymupdf).

Text is extracted page by page (one fast plain-text pass) and joined with PAGE_SEPARATOR; the
offset where each page begins is kept so any character range maps back to pages. Headings come
from the outline when there is one, else from font sizes (a slower layout pass, only then).
"""

import bisect
import re
from collections.abc import Callable
from pathlib import PurePath

import pymupdf

from workers.parsing.pdf_headings import OutlineEntry, font_size_outline, heading_positions
from workers.parsing.text import trim_span
from workers.parsing.types import (
    OutOfMemory,
    ParsedDocument,
    ParseError,
    Section,
    bounded,
    is_out_of_memory,
    too_many_chars,
)

PAGE_SEPARATOR = "\n\n"
# Ligatures expanded ("ﬁ" -> "fi") and words hyphenated across lines joined: both matter for search.
_TEXT_FLAGS = (pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES) | pymupdf.TEXT_DEHYPHENATE
_BLANK_RUNS = re.compile(r"\n{3,}")

EMPTY = "The file is empty."
NOT_PDF = "The file is not a PDF (its content does not start with a PDF header)."
PASSWORD = "This PDF is password-protected; upload a copy without a password."
DAMAGED = "The PDF is damaged or incomplete and could not be read."
NO_PAGES = "The PDF has no pages."
NO_TEXT = "No extractable text was found in this PDF; it looks like a scan or images and would need OCR."


def parse_pdf(
    data: bytes,
    *,
    filename: str,
    title: str | None = None,
    max_pages: int | None = None,
    max_chars: int | None = None,
    image: bool = False,
    on_ocr_page: Callable[[int], None] | None = None,
) -> ParsedDocument:
    """`image`: the bytes are a page image (PNG, JPEG, TIFF), read as a one-page document.
    Raises ParseError (with the reason) past `max_pages` pages or `max_chars` characters of text, and
    OutOfMemory when MuPDF cannot allocate (workers/parsing/bounded.py runs this under a memory limit)."""
    doc = _open(data)
    try:
        page_count = _page_count(doc)
        if max_pages is not None and page_count > max_pages:
            raise ParseError(f"The PDF has {page_count:,} pages, more than the {max_pages:,} pages allowed.")
        page_texts, unreadable = _extract_pages(doc, page_count, max_chars)
        if not any(page_texts):
            raise ParseError(DAMAGED if unreadable else NO_TEXT)
        text, page_offsets = _join_pages(page_texts)
        outline = _outline(doc, page_count)
        if not outline:
            readable = [number for number, page in enumerate(page_texts, start=1) if page]
            outline = font_size_outline(doc, readable)
        headings = [(position, tuple(bounded(part) for part in path)) for position, path in
                    heading_positions(text, page_offsets, outline)]  # fmt: skip
        metadata_title = _metadata_title(doc)
    finally:
        doc.close()
    warnings = [_unreadable_warning(unreadable)] if unreadable else []
    return ParsedDocument(
        title=bounded((title or "").strip() or metadata_title or PurePath(filename).stem or filename),
        text=text,
        sections=_sections(text, page_offsets, headings),
        page_count=page_count,
        warnings=warnings,
        source_type="pdf",
        page_offsets=page_offsets,
    )


def _open(data: bytes) -> pymupdf.Document:
    if not data:
        raise ParseError(EMPTY)
    # pymupdf sniffs the content and would happily open a PNG named .pdf; the header settles it.
    if b"%PDF-" not in data[:1024]:
        raise ParseError(NOT_PDF)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception:  # pymupdf raises several types (FileDataError, RuntimeError, ValueError)
        raise ParseError(DAMAGED) from None
    if doc.needs_pass:
        doc.close()
        raise ParseError(PASSWORD)
    if not doc.is_pdf:
        doc.close()
        raise ParseError(NOT_PDF)
    return doc


def _page_count(doc: pymupdf.Document) -> int:
    try:
        count = doc.page_count
    except Exception:
        raise ParseError(DAMAGED) from None
    if count == 0:
        # A cut-off file loses its page tree and opens "repaired" with no pages.
        raise ParseError(DAMAGED if getattr(doc, "is_repaired", False) else NO_PAGES)
    return count


def _extract_pages(
    doc: pymupdf.Document, page_count: int, max_chars: int | None = None
) -> tuple[list[str], list[int]]:
    texts: list[str] = []
    unreadable: list[int] = []
    total = 0
    for index in range(page_count):
        try:
            raw = doc.load_page(index).get_text("text", flags=_TEXT_FLAGS)
        except Exception as error:  # a broken page must not sink the document; it is reported in warnings
            if is_out_of_memory(error):  # but a page that needs more memory than allowed is no broken page
                raise OutOfMemory(str(error)) from None
            unreadable.append(index + 1)
            raw = ""
        texts.append(_clean_page(raw))
        total += len(texts[-1])
        if max_chars is not None and total > max_chars:  # stop extracting here, not after the last page
            raise too_many_chars(max_chars)
    return texts, unreadable


def _clean_page(raw: str) -> str:
    raw = raw.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    lines = "\n".join(line.rstrip() for line in raw.split("\n"))
    return _BLANK_RUNS.sub("\n\n", lines).strip()


def _join_pages(page_texts: list[str]) -> tuple[str, tuple[int, ...]]:
    parts: list[str] = []
    offsets: list[int] = []
    position = 0
    for page_text in page_texts:
        if page_text and position:
            parts.append(PAGE_SEPARATOR)
            position += len(PAGE_SEPARATOR)
        offsets.append(position)  # an empty page starts (and ends) where the next text would go
        parts.append(page_text)
        position += len(page_text)
    return "".join(parts), tuple(offsets)


def _outline(doc: pymupdf.Document, page_count: int) -> list[OutlineEntry]:
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # a broken outline is no reason to fail: fall back to font sizes
        return []
    entries = [(int(level), str(title), int(page)) for level, title, page, *_ in toc]
    # An outline that points nowhere in this file (e.g. a truncated copy) is not worth following.
    return entries if any(1 <= page <= page_count for _, _, page in entries) else []


def _metadata_title(doc: pymupdf.Document) -> str:
    try:
        return " ".join(str((doc.metadata or {}).get("title") or "").split())
    except Exception:
        return ""


def page_of(page_offsets: tuple[int, ...], offset: int) -> int:
    """1-based page holding the character at `offset`."""
    return max(bisect.bisect_right(page_offsets, offset), 1)


def _sections(
    text: str, page_offsets: tuple[int, ...], headings: list[tuple[int, tuple[str, ...]]]
) -> list[Section]:
    bounds: list[tuple[int, tuple[str, ...]]] = [(0, ())]  # text before the first heading
    bounds.extend(headings)
    sections: list[Section] = []
    for index, (start, path) in enumerate(bounds):
        end = bounds[index + 1][0] if index + 1 < len(bounds) else len(text)
        start, end = trim_span(text, start, end)
        if start >= end:
            continue  # a heading directly followed by the next one, or an empty preamble
        sections.append(
            Section(
                path=path,
                text=text[start:end],
                char_start=start,
                char_end=end,
                page_start=page_of(page_offsets, start),
                page_end=page_of(page_offsets, end - 1),
            )
        )
    return sections


def _unreadable_warning(pages: list[int]) -> str:
    verb = "was" if len(pages) == 1 else "were"
    return f"{_describe_pages(pages)} could not be read and {verb} left out"


def _describe_pages(pages: list[int]) -> str:
    """[3, 4, 5, 9] -> "pages 3-5, 9"."""
    ranges: list[str] = []
    start = previous = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == previous + 1:
            previous = page
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if page is not None:
            start = previous = page
    return ("page " if len(pages) == 1 else "pages ") + ", ".join(ranges)

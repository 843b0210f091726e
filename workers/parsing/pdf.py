"""PDF into page-numbered, heading-delimited sections (pymupdf).

Text is extracted page by page (one fast plain-text pass) and joined with PAGE_SEPARATOR; the
offset where each page begins is kept so any character range maps back to pages. Headings come
from the outline when there is one, else from font sizes (a slower layout pass, only then).
"""

import bisect
from collections.abc import Callable
from pathlib import PurePath

import pymupdf

from workers.parsing.ocr import OcrOptions, check_image_upload, is_scanned, recognise_pages
from workers.parsing.pdf_headings import OutlineEntry, font_size_outline, heading_positions
from workers.parsing.text import clean_page, describe_pages, trim_span
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
TEXT_FLAGS = (pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES) | pymupdf.TEXT_DEHYPHENATE

EMPTY = "The file is empty."
NOT_PDF = "The file is not a PDF (its content does not start with a PDF header)."
PASSWORD = "This PDF is password-protected; upload a copy without a password."
DAMAGED = "The PDF is damaged or incomplete and could not be read."
NO_PAGES = "The PDF has no pages."
NO_TEXT = "No text was found in this PDF: its pages have no text layer and OCR recognised no text in them."
BLANK = "No text was found in this PDF: its pages are blank."
IMAGE_NO_TEXT = "No text was recognised in this image (OCR)."
IMAGE_DAMAGED = "The image is damaged or in a form that cannot be read."


def parse_pdf(
    data: bytes,
    *,
    filename: str,
    title: str | None = None,
    max_pages: int | None = None,
    max_chars: int | None = None,
    image: bool = False,
    on_ocr_page: Callable[[int], None] | None = None,
    ocr: OcrOptions | None = None,
) -> ParsedDocument:
    """`image`: the bytes are a page image (PNG, JPEG, TIFF), read as a one-page document (a TIFF: one
    page per image). Pages without a text layer that draw something (scans) are read by OCR
    (workers/parsing/ocr.py, `ocr` its options), `on_ocr_page(n)` called before each.
    Raises ParseError (with the reason) past `max_pages` pages or `max_chars` characters of text, and
    OutOfMemory when MuPDF cannot allocate (workers/parsing/bounded.py runs this under a memory limit)."""
    kind = "image" if image else "PDF"
    doc = open_image(data, max_pages) if image else open_pdf(data)
    try:
        page_count = _page_count(doc)
        if max_pages is not None and page_count > max_pages:
            raise ParseError(
                f"The {kind} has {page_count:,} pages, more than the {max_pages:,} pages allowed."
            )
        if image:  # no text layer to extract: every page is a scan
            page_texts, unreadable, scanned = [""] * page_count, [], list(range(1, page_count + 1))
        else:
            page_texts, unreadable, scanned = _extract_pages(doc, page_count, max_chars)
        warnings = [_unreadable_warning(unreadable)] if unreadable else []
        failed: list[int] = []
        if scanned:
            ocr_warnings, failed = recognise_pages(
                doc, page_texts, scanned, options=ocr or OcrOptions(), kind=kind, flags=TEXT_FLAGS,
                max_chars=max_chars, on_page=on_ocr_page,
            )  # fmt: skip
            warnings += ocr_warnings
        if not any(page_texts):
            if unreadable or failed:
                raise ParseError(IMAGE_DAMAGED if image else DAMAGED)
            raise ParseError(IMAGE_NO_TEXT if image else NO_TEXT if scanned else BLANK)
        text, page_offsets = _join_pages(page_texts)
        outline = [] if image else _outline(doc, page_count)
        if not outline:  # font sizes of the text layer; OCR keeps no sizes worth ranking
            with_layer = set(range(1, page_count + 1)) - set(scanned)
            readable = [
                number for number, page in enumerate(page_texts, start=1) if page and number in with_layer
            ]
            outline = font_size_outline(doc, readable)
        headings = [(position, tuple(bounded(part) for part in path)) for position, path in
                    heading_positions(text, page_offsets, outline)]  # fmt: skip
        metadata_title = "" if image else _metadata_title(doc)
    finally:
        doc.close()
    return ParsedDocument(
        title=bounded((title or "").strip() or metadata_title or PurePath(filename).stem or filename),
        text=text,
        sections=_sections(text, page_offsets, headings),
        page_count=page_count,
        warnings=warnings,
        source_type="pdf",
        page_offsets=page_offsets,
    )


def open_image(data: bytes, max_pages: int | None) -> pymupdf.Document:
    if not data:
        raise ParseError(EMPTY)
    try:  # MuPDF reads the headers only here: the pixels are decoded when a page is rendered
        doc = pymupdf.open(stream=data)
        frames = doc.page_count
    except Exception:
        raise ParseError(IMAGE_DAMAGED) from None
    if doc.is_pdf or frames < 1:
        doc.close()
        raise ParseError(IMAGE_DAMAGED)
    try:  # the size of each image before any is decoded (a decompression bomb)
        check_image_upload(data, frames if max_pages is None else min(frames, max_pages))
    except ParseError:
        doc.close()
        raise
    return doc


def open_pdf(data: bytes) -> pymupdf.Document:
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
) -> tuple[list[str], list[int], list[int]]:
    """Each page's text layer; the pages that could not be read; the pages without text that are
    scans (1-based)."""
    texts: list[str] = []
    unreadable: list[int] = []
    scanned: list[int] = []
    total = 0
    for index in range(page_count):
        try:
            page = doc.load_page(index)
            text = clean_page(page.get_text("text", flags=TEXT_FLAGS))
            if not text and is_scanned(page):
                scanned.append(index + 1)
        except Exception as error:  # a broken page must not sink the document; it is reported in warnings
            if is_out_of_memory(error):  # but a page that needs more memory than allowed is no broken page
                raise OutOfMemory(str(error)) from None
            unreadable.append(index + 1)
            text = ""
        texts.append(text)
        total += len(text)
        if max_chars is not None and total > max_chars:  # stop extracting here, not after the last page
            raise too_many_chars(max_chars)
    return texts, unreadable, scanned


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
    return f"{describe_pages(pages)} could not be read and {verb} left out"

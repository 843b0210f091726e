"""Uploaded bytes into a ParsedDocument: text plus heading-delimited sections, no database."""

import importlib
from collections.abc import Callable

from workers.parsing.markdown import parse_markdown, parse_text
from workers.parsing.ocr import OcrOptions
from workers.parsing.pdf import parse_pdf
from workers.parsing.structured import StructuredFormat, parse_structured
from workers.parsing.types import ParsedDocument, ParseError, Section

__all__ = [
    "OcrOptions", "ParseError", "ParsedDocument", "Section", "parse_document", "parse_markdown", "parse_pdf",
    "parse_text",
]  # fmt: skip

# The module declaring each structured format (its FORMAT), imported on first use: the parse child of a
# PDF does not load trafilatura or python-pptx (memory counted against its RLIMIT_AS).
_STRUCTURED = {
    "pptx": "workers.parsing.pptx",
    "docx": "workers.parsing.docx",
    "xlsx": "workers.parsing.xlsx",
    "epub": "workers.parsing.epub",
    "html": "workers.parsing.html",
}


def parse_document(
    data: bytes,
    *,
    source_type: str,
    filename: str,
    title: str | None = None,
    max_pages: int | None = None,
    max_chars: int | None = None,
    max_memory_mb: int = 2048,
    on_ocr_page: Callable[[int], None] | None = None,
    ocr: OcrOptions | None = None,
) -> ParsedDocument:
    """Dispatch on source_type (core/text/filetypes.py); raises ParseError with a user-facing reason.
    In-process and unbounded in time and memory: the worker goes through workers/parsing/bounded.py.
    `on_ocr_page(n)` is called before each page that goes through OCR (the bounded parent extends its
    deadline by OCR_PAGE_TIMEOUT_S per page); `ocr`: OCR_ENABLED, OCR_LANGUAGES, OCR_MAX_PAGES (None: the
    defaults)."""
    if source_type in ("pdf", "image"):
        return parse_pdf(
            data, filename=filename, title=title, max_pages=max_pages, max_chars=max_chars,
            image=source_type == "image", on_ocr_page=on_ocr_page, ocr=ocr,
        )  # fmt: skip
    if source_type in ("markdown", "text"):
        parser = parse_markdown if source_type == "markdown" else parse_text
        return parser(data, filename=filename, title=title, max_chars=max_chars)
    module = _STRUCTURED.get(source_type)
    if module is None:
        raise ParseError(f"Unsupported document type {source_type!r}.")
    fmt: StructuredFormat = importlib.import_module(module).FORMAT
    return parse_structured(
        fmt, data, filename=filename, title=title, max_chars=max_chars, max_memory_mb=max_memory_mb
    )

"""Uploaded bytes into a ParsedDocument: text plus heading-delimited sections, no database."""

from workers.parsing.markdown import parse_markdown, parse_text
from workers.parsing.pdf import parse_pdf
from workers.parsing.types import ParsedDocument, ParseError, Section

__all__ = [
    "ParseError", "ParsedDocument", "Section", "parse_document", "parse_markdown", "parse_pdf", "parse_text",
]  # fmt: skip

_PARSERS = {"markdown": parse_markdown, "text": parse_text}


def parse_document(
    data: bytes,
    *,
    source_type: str,
    filename: str,
    title: str | None = None,
    max_pages: int | None = None,
    max_chars: int | None = None,
) -> ParsedDocument:
    """Dispatch on source_type ("pdf", "markdown", "text"); raises ParseError with a user-facing reason.
    In-process and unbounded in time and memory: the worker goes through workers/parsing/bounded.py."""
    if source_type == "pdf":
        return parse_pdf(data, filename=filename, title=title, max_pages=max_pages, max_chars=max_chars)
    parser = _PARSERS.get(source_type)
    if parser is None:
        raise ParseError(f"Unsupported document type {source_type!r}; upload a PDF, Markdown or text file.")
    return parser(data, filename=filename, title=title, max_chars=max_chars)

"""What parsers hand to the chunker: a document's text cut into heading-delimited sections."""

from dataclasses import dataclass, field

# A title or heading is copied into every chunk of its section (header, path, embedding text), so each
# is cut to this many characters: a 1 MB `#` line stays one chunk's text instead of multiplying.
HEADING_MAX_CHARS = 200
_ELLIPSIS = "…"


def bounded(text: str, limit: int = HEADING_MAX_CHARS) -> str:
    """`text` cut to at most `limit` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS


class ParseError(Exception):
    """The file cannot be indexed; the message is shown to the user as the job's reason."""


class OutOfMemory(Exception):
    """Parsing ran out of the memory it is allowed (the child's RLIMIT_AS, workers/parsing/bounded.py)."""


def is_out_of_memory(error: BaseException) -> bool:
    """A MemoryError, MuPDF's failed allocation (FzErrorSystem "malloc (N bytes) failed"), which
    pymupdf raises as another exception type (a page that fails this way is no "unreadable page"), or a
    shared library that could not be mapped."""
    if isinstance(error, MemoryError | OutOfMemory):
        return True
    message = str(error).lower()
    # A library loaded on first use (python-pptx's lxml, Pillow) under RLIMIT_AS: the loader cannot map it.
    unmapped = "failed to map segment" in message or "cannot allocate" in message
    if isinstance(error, ImportError) and unmapped:
        return True
    # "memoryerror": a MemoryError in pymupdf's Python callback (OCR output) comes back as FzErrorGeneric.
    return (
        "out of memory" in message or "memoryerror" in message or ("alloc" in message and "failed" in message)
    )


def too_many_chars(max_chars: int) -> ParseError:
    return ParseError(
        f"The document has more than {max_chars:,} characters of text; split it into smaller files."
    )


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]  # heading titles, outermost first; () for text before the first heading
    text: str  # the section's own text (for Markdown the raw source, heading line included)
    char_start: int  # offsets of `text` in ParsedDocument.text
    char_end: int
    page_start: int | None = None  # 1-based, PDF only
    page_end: int | None = None


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    text: str  # full extracted text; Section offsets index into it
    sections: list[Section]
    page_count: int | None = None
    warnings: list[str] = field(default_factory=list)  # e.g. "pages 120-288 could not be read"
    # Added for the chunker: which block splitter fits the text ("pdf", "markdown" or "text"), and for
    # PDFs the offset in `text` where each page begins (page i+1 starts at page_offsets[i]), so a chunk
    # cut from inside a section still gets its own page range.
    source_type: str = "text"
    page_offsets: tuple[int, ...] = ()

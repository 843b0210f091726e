"""What parsers hand to the chunker: a document's text cut into heading-delimited sections."""

from dataclasses import dataclass, field


class ParseError(Exception):
    """The file cannot be indexed; the message is shown to the user as the job's reason."""


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

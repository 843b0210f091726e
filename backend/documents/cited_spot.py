"""What a citation opens (issue 42): the stored version it names, never a newer one, as the browser
shows it. The exact bytes with their media type (a PDF, a scan or a page image is shown by the web app
itself: pdf.js or an image), and for the formats shown as text (Markdown, text, web pages, Word, EPUB,
slide decks) the parsed text of that version around the cited characters.

A chunk's `char_start`/`char_end` index the parsed text of its version (DATA_MODEL.md), and that text is
not stored: it is parsed again from the version's bytes with the same bounded parser the worker used
(workers/parsing/bounded.py: a child process for every type but Markdown and text), so the offsets match.
A PDF is never parsed here (its OCR could take minutes): its cited characters are the text of the
version's chunks while they are live; once a newer version replaced them, the web app highlights with the
citation's own text. No HTTP here: refusals are core/errors.py's kinds."""

from dataclasses import dataclass

from core.errors import NotFound, Unprocessable
from core.messages import Text
from core.settings.parsing import ParseSettings
from core.store.content.refs import location_of
from core.store.content.versions import StoredVersion, VersionChunk
from core.text.filetypes import UnsupportedFileType, detect_source_type
from workers.parsing.bounded import parse_bounded
from workers.parsing.types import ParsedDocument, ParseError

SHOWN_BY_PAGE = frozenset({"pdf", "image"})  # pages drawn by the browser; everything else as text
# Around a passage in a long section (a text file without headings is one section): this many characters
# each side at most, so a 10 MB book is never sent to show one paragraph.
CONTEXT_CHARS = 12_000

_TEXT_TYPES = {
    "markdown": "text/markdown",
    "text": "text/plain",
    "html": "text/html",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "epub": "application/epub+zip",
    "pdf": "application/pdf",
}
_IMAGE_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


def not_found() -> NotFound:
    return NotFound(Text("version.not_found"))


def source_type_of(version: StoredVersion) -> str:
    """Decided from the version's own bytes, as at its upload: a document's `source_type` is its latest
    version's, and an old citation may name a version of another type."""
    try:
        return detect_source_type(version.content, version.filename).source_type
    except UnsupportedFileType:  # accepted by an older rule: shown as bytes to download
        return "unknown"


def media_type_of(version: StoredVersion, source_type: str) -> str:
    if source_type == "image":
        return next((media for sig, media in _IMAGE_TYPES if version.content.startswith(sig)), "image/png")
    media = _TEXT_TYPES.get(source_type, "application/octet-stream")
    if media.startswith("text/") and _is_utf8(version.content):
        return f"{media}; charset=utf-8"
    return media


def _is_utf8(content: bytes) -> bool:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass(frozen=True)
class Range:
    start: int
    end: int


@dataclass(frozen=True)
class Passage:
    char_start: int
    char_end: int
    text: str | None  # None: no longer known here (an older PDF version's chunks are gone)
    page_start: int | None
    page_end: int | None


@dataclass(frozen=True)
class Context:
    """The parsed text shown around the passage: its section(s), or the cited slide."""

    char_start: int
    char_end: int
    text: str
    path: list[str]
    page: int | None


@dataclass(frozen=True)
class CitedSpot:
    source_type: str
    location: str | None
    media_type: str
    shown_as: str  # "pdf", "image" or "text"
    page_count: int | None
    passage: Passage | None
    context: Context | None


def passage_from_chunks(chunks: list[VersionChunk], wanted: Range) -> Passage | None:
    """The cited characters rebuilt from the live chunks that cover them (each is the parsed text's slice
    [char_start, char_end)); None when none is live."""
    if not chunks:
        return None
    exact = next((c for c in chunks if (c.char_start, c.char_end) == (wanted.start, wanted.end)), None)
    if exact is not None:  # a citation names its chunk's own range: that chunk, its pages
        return Passage(exact.char_start, exact.char_end, exact.text, exact.page_start, exact.page_end)
    parts: list[str] = []
    at = max(wanted.start, chunks[0].char_start)
    start = at
    for chunk in chunks:
        if chunk.char_start > at:  # a gap the live chunks do not cover: what is known so far
            break
        stop = min(chunk.char_end, wanted.end)
        if stop > at:
            parts.append(chunk.text[at - chunk.char_start : stop - chunk.char_start])
            at = stop
    pages = [page for chunk in chunks for page in (chunk.page_start, chunk.page_end) if page is not None]
    return Passage(
        char_start=start, char_end=at, text="".join(parts) or None,
        page_start=min(pages, default=None), page_end=max(pages, default=None),
    )  # fmt: skip


def page_spot(
    version: StoredVersion, source_type: str, chunks: list[VersionChunk], wanted: Range | None
) -> CitedSpot:
    """A PDF or a page image: drawn by the browser from the bytes; the passage from the live chunks."""
    return CitedSpot(
        source_type=source_type,
        location=location_of(source_type),
        media_type=media_type_of(version, source_type),
        shown_as="pdf" if source_type == "pdf" else "image",
        page_count=None,
        passage=passage_from_chunks(chunks, wanted) if wanted is not None else None,
        context=None,
    )


async def text_spot(
    version: StoredVersion, source_type: str, wanted: Range | None, page: int | None, limits: ParseSettings
) -> CitedSpot:
    """A format shown as text: the version parsed again, and the section (a deck: the slide) around the
    cited characters, or around `page` (a slide) when no characters are named."""
    try:
        parsed = await parse_bounded(
            version.content, source_type=source_type, filename=version.filename, title=version.title,
            limits=limits,
        )  # fmt: skip
    except ParseError as error:
        raise Unprocessable(Text("version.unreadable", reason=str(error))) from error
    text = parsed.text
    passage: Passage | None = None
    if wanted is not None:
        start, end = min(wanted.start, len(text)), min(wanted.end, len(text))
        pages = _pages_of(parsed, start, end)
        passage = Passage(
            char_start=start, char_end=end, text=text[start:end], page_start=pages[0], page_end=pages[1]
        )
    slide = page if page is not None else (passage.page_start if passage else None)
    return CitedSpot(
        source_type=source_type,
        location=location_of(source_type),
        media_type=media_type_of(version, source_type),
        shown_as="text",
        page_count=parsed.page_count,
        passage=passage,
        context=_context(parsed, Range(passage.char_start, passage.char_end) if passage else None, slide),
    )


def _pages_of(parsed: ParsedDocument, start: int, end: int) -> tuple[int | None, int | None]:
    offsets = parsed.page_offsets
    if not offsets:
        return None, None

    def page_at(offset: int) -> int:
        return max(1, sum(1 for begin in offsets if begin <= offset))

    return page_at(start), page_at(max(start, end - 1))


def _context(parsed: ParsedDocument, wanted: Range | None, slide: int | None) -> Context | None:
    text = parsed.text
    if slide is not None and parsed.page_offsets and 1 <= slide <= len(parsed.page_offsets):
        begin = parsed.page_offsets[slide - 1]
        finish = parsed.page_offsets[slide] if slide < len(parsed.page_offsets) else len(text)
        path = next((list(s.path) for s in parsed.sections if s.char_start >= begin and s.path), [])
        return Context(char_start=begin, char_end=finish, text=text[begin:finish], path=path, page=slide)
    if not parsed.sections:
        return None
    at = wanted or Range(0, 0)
    around = [
        s for s in parsed.sections if s.char_start < max(at.end, at.start + 1) and s.char_end > at.start
    ]
    if not around:
        around = [parsed.sections[0]]
    begin, finish = around[0].char_start, around[-1].char_end
    # A long section: a window around the passage, cut at paragraph breaks.
    if at.start - begin > CONTEXT_CHARS:
        cut = text.rfind("\n\n", begin, at.start - CONTEXT_CHARS // 2)
        begin = cut + 2 if cut >= 0 else at.start - CONTEXT_CHARS // 2
    if finish - at.end > CONTEXT_CHARS:
        cut = text.find("\n\n", at.end + CONTEXT_CHARS // 2, finish)
        finish = cut if cut >= 0 else at.end + CONTEXT_CHARS // 2
    return Context(
        char_start=begin, char_end=finish, text=text[begin:finish], path=list(around[0].path), page=None
    )

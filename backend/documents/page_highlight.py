"""A cited passage highlighted on the page itself where the browser has no text to mark (issue 42): a scanned
PDF page or a page image. The page's words and boxes are read once (the text layer, else OCR as the index
read the page: workers/parsing/page_words.py, in the bounded child) and kept (core/store/content/page_words);
the passage's words are found among them and the boxes of that run are answered, one per line, as
fractions of the page, for the web app to draw over pdf.js's canvas or the image. No HTTP here."""

import asyncio
import weakref
from dataclasses import dataclass, field
from difflib import Match, SequenceMatcher
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from backend.documents import cited_spot
from core.errors import Unprocessable
from core.messages import Text
from core.settings.parsing import ParseSettings
from core.store.content import page_words, versions
from core.store.sql.access import ProjectScope
from core.text.answers import normalize
from core.text.page_words import PageWord, PageWords
from workers.parsing.bounded import page_words_bounded
from workers.parsing.types import ParseError

# A run of the page's words counts when at least this many go as the passage's do ("of the" elsewhere on
# the page is chance), and the highlight needs this many in all (a short passage: all of its words).
_LEAST_RUN = 3
_LEAST_MATCHED = 6
# Runs belong to one highlight while the page skips at most this many words more than the passage does
# between them (OCR splits or drops a word; a hyphenated word is joined in one text and not the other).
_SLACK = 8
# OCR is seconds of CPU that the model server needs too: this many pages read at once per API process.
PAGE_READS_AT_ONCE = 2


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class PageHighlight:
    page: int
    source: str  # "text" or "ocr"
    boxes: list[Box]
    matched_words: int  # of the passage's words, how many were found on this page
    passage_words: int


@dataclass
class PageReader:
    """One read per page at a time (a class opening one citation waits for the first reader's words, then
    finds them kept) and PAGE_READS_AT_ONCE reads in all. Held by the API's resources, one per process."""

    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(PAGE_READS_AT_ONCE))
    # A page's lock lives while someone holds or awaits it.
    pages: weakref.WeakValueDictionary[tuple[UUID, int, int], asyncio.Lock] = field(
        default_factory=weakref.WeakValueDictionary
    )

    def page_lock(self, key: tuple[UUID, int, int]) -> asyncio.Lock:
        lock = self.pages.get(key)
        if lock is None:
            lock = self.pages[key] = asyncio.Lock()
        return lock


def tokens(text: str) -> list[str]:
    """Lower case, accents and punctuation dropped (core/text/answers.normalize): OCR and the chunker agree
    on these words, not on punctuation."""
    return normalize(text).split()


def passage_boxes(words: list[PageWord], passage: str) -> tuple[list[Box], int, int]:
    """The boxes (one per line) of the run of `words` that holds the passage, how many of the passage's
    words were found there, and how many it has. No boxes when too few were found (another page's
    passage)."""
    wanted = tokens(passage)
    page: list[str] = []
    owner: list[int] = []  # the word each page token came from ("don't" is two tokens of one word)
    for index, word in enumerate(words):
        for token in tokens(word.text):
            page.append(token)
            owner.append(index)
    if not wanted or not page:
        return [], 0, len(wanted)
    least = min(_LEAST_RUN, len(wanted))
    blocks = SequenceMatcher(None, page, wanted, autojunk=False).get_matching_blocks()
    runs = [m for m in blocks if m.size >= least]
    best = max(_clusters(runs), key=lambda group: sum(m.size for m in group), default=[])
    matched = sum(m.size for m in best)
    if matched < min(_LEAST_MATCHED, len(wanted)):
        return [], matched, len(wanted)
    first, last = owner[best[0].a], owner[best[-1].a + best[-1].size - 1]
    return _line_boxes(words[first : last + 1]), matched, len(wanted)


def _clusters(runs: list[Match]) -> list[list[Match]]:
    """Runs in page order, grouped while the page's gap between them is near the passage's."""
    groups: list[list[Match]] = []
    for run in runs:
        if groups:
            before = groups[-1][-1]
            page_gap, passage_gap = run.a - (before.a + before.size), run.b - (before.b + before.size)
            if page_gap <= passage_gap + _SLACK:
                groups[-1].append(run)
                continue
        groups.append([run])
    return groups


def _line_boxes(words: list[PageWord]) -> list[Box]:
    boxes: list[Box] = []
    line: int | None = None
    for word in words:
        if word.line == line and boxes:
            last = boxes[-1]
            boxes[-1] = Box(
                min(last.x0, word.x0), min(last.y0, word.y0), max(last.x1, word.x1), max(last.y1, word.y1)
            )
        else:
            boxes.append(Box(word.x0, word.y0, word.x1, word.y1))
        line = word.line
    return boxes


async def page_highlight(
    pool: AsyncConnectionPool,
    access: ProjectScope,
    *,
    document_id: UUID,
    version: int,
    page: int,
    wanted: cited_spot.Range | None,
    quote: str | None,
    limits: ParseSettings,
    reader: PageReader,
) -> PageHighlight:
    """The passage's boxes on `page` of this version: its characters' text from the version's live chunks,
    else `quote` (the citation's own text, for a version whose chunks a newer one replaced). A page whose
    words are kept is answered from them and the chunks alone: the version's bytes are read only to read
    the page."""
    async with pool.connection() as conn:
        words = await page_words.kept_words(
            conn, **access, document_id=document_id, version=version, page=page
        )
        chunks = []
        if wanted is not None:
            chunks = await versions.chunks_in_range(
                conn, **access, document_id=document_id, version=version,
                char_start=wanted.start, char_end=wanted.end,
            )  # fmt: skip
    if words is None:
        words = await _read_words(pool, access, document_id, version, page, limits, reader)
    passage = cited_spot.passage_from_chunks(chunks, wanted) if wanted is not None else None
    text = (passage.text if passage else None) or quote or ""
    boxes, matched, total = passage_boxes(words.words, text)
    return PageHighlight(
        page=page, source=words.source, boxes=boxes, matched_words=matched, passage_words=total
    )


async def _read_words(
    pool: AsyncConnectionPool,
    access: ProjectScope,
    document_id: UUID,
    version: int,
    page: int,
    limits: ParseSettings,
    reader: PageReader,
) -> PageWords:
    """The page read now (no connection held while it is read) and kept; a reader who waited on the page's
    lock finds it kept. 404 for a version the caller cannot read, 422 for one shown as text."""
    async with reader.page_lock((document_id, version, page)):
        async with pool.connection() as conn:
            kept = await page_words.kept_words(
                conn, **access, document_id=document_id, version=version, page=page
            )
            if kept is not None:
                return kept
            stored = await versions.stored_version(conn, **access, document_id=document_id, version=version)
        if stored is None:
            raise cited_spot.not_found()
        source_type = cited_spot.source_type_of(stored)
        if source_type not in cited_spot.SHOWN_BY_PAGE:
            raise Unprocessable(Text("version.shown_as_text"))
        async with reader.slots:
            try:
                read = await page_words_bounded(
                    stored.content, source_type=source_type, filename=stored.filename, page=page,
                    limits=limits,
                )  # fmt: skip
            except ParseError as error:
                raise Unprocessable(Text("version.page_unreadable", reason=str(error))) from error
        async with pool.connection() as conn:
            await page_words.keep_words(conn, **access, document_id=document_id, version=version, words=read)
        return read

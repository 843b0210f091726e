"""Sections into chunks: whole sections where they fit, small ones merged, long ones split.

Rules (DESIGN.md §3):
- A section that fits in max_chars is one chunk. A section shorter than min_chars absorbs the
  following sections while the merged slice of the document still fits in max_chars, so a file of
  tiny sections does not become thousands of near-empty chunks; never across a deck's slides. Only
  sections that fit whole are merged, and merging looks forward only, so an edit moves at most the
  boundaries of its own run of small sections.
- A merged chunk's section_path is the longest common prefix of the merged paths (sections that are
  only a heading left out), or the first section's path when they share nothing (the chunk starts
  there, and () would lose the place).
- A long section is cut at block boundaries (chunking_blocks), packed greedily up to max_chars. Each
  chunk after the first of a section starts with up to overlap_chars of the previous chunk's last
  block, cut at a sentence or word start, never taken from code. No overlap across sections.
- Chunk text is the document slice text[char_start:char_end] (overlap included), except that a
  code block split across chunks gets synthetic fence lines so every chunk's fences balance.
- Everything is a pure function of (document, config): reindexing an unchanged section reproduces
  byte-identical chunks and hashes.
"""

import hashlib
from dataclasses import dataclass

from workers.chunking.blocks import SectionSplitter
from workers.chunking.pack import Packer, Span
from workers.parsing.pdf import page_of
from workers.parsing.types import HEADING_MAX_CHARS, ParsedDocument, Section, bounded

HEADER_SEPARATOR = " > "
# Each title and heading is cut to HEADING_MAX_CHARS (parsing/types.py; the parsers cut them already,
# this holds for any ParsedDocument) and the whole "title > section > ..." header to HEADER_MAX_CHARS.
# Changing either changes chunk hashes.
HEADER_MAX_CHARS = 300


@dataclass(frozen=True)
class ChunkDraft:
    ordinal: int  # 0-based position in the document
    text: str  # the chunk's own text (stored, shown to users)
    context_header: str  # "Document title > Section > Subsection" (stored apart, embedded with text)
    section_path: tuple[str, ...]
    page_start: int | None
    page_end: int | None
    char_start: int  # offsets into ParsedDocument.text
    char_end: int
    content_hash: str  # sha256 hex of embed_text

    @property
    def embed_text(self) -> str:
        return _embed_text(self.context_header, self.text)


@dataclass(frozen=True)
class ChunkingConfig:
    max_chars: int = 1200
    overlap_chars: int = 150
    min_chars: int = 200

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.overlap_chars < 0 or self.min_chars < 0:
            raise ValueError("max_chars must be positive; overlap_chars and min_chars not negative")


def chunk_document(doc: ParsedDocument, config: ChunkingConfig = ChunkingConfig()) -> list[ChunkDraft]:
    drafts: list[ChunkDraft] = []
    title = bounded(doc.title.strip(), HEADING_MAX_CHARS)
    for group in _group_sections(doc, config):
        spans = _split(doc, group[0], config) if len(group) == 1 else [_whole(group)]
        path = tuple(bounded(part, HEADING_MAX_CHARS) for part in _common_path(group))
        header = bounded(HEADER_SEPARATOR.join(part for part in (title, *path) if part), HEADER_MAX_CHARS)
        for span in spans:
            text = span.render(doc.text).replace("\x00", "")
            if not text.strip():
                continue
            page_start, page_end = _pages(doc, group, span)
            drafts.append(
                ChunkDraft(
                    ordinal=len(drafts),
                    text=text,
                    context_header=header,
                    section_path=path,
                    page_start=page_start,
                    page_end=page_end,
                    char_start=span.start,
                    char_end=span.end,
                    content_hash=hashlib.sha256(_embed_text(header, text).encode("utf-8")).hexdigest(),
                )
            )
    return drafts


def _embed_text(header: str, text: str) -> str:
    return f"{header}\n\n{text}" if header else text


def _group_sections(doc: ParsedDocument, config: ChunkingConfig) -> list[list[Section]]:
    sections = [section for section in doc.sections if section.char_end > section.char_start]
    # A deck's slides are never merged (a citation names one slide); a PDF's small sections may span pages.
    per_page = doc.source_type == "markdown" and bool(doc.page_offsets)
    groups: list[list[Section]] = []
    index = 0
    while index < len(sections):
        group = [sections[index]]
        start = group[0].char_start
        index += 1
        if group[0].char_end - start <= config.max_chars:
            while (
                index < len(sections)
                and group[-1].char_end - start < config.min_chars
                and sections[index].char_end - start <= config.max_chars
                and not (per_page and sections[index].page_start != group[-1].page_end)
            ):
                group.append(sections[index])
                index += 1
        groups.append(group)
    return groups


def _whole(group: list[Section]) -> Span:
    return Span(group[0].char_start, group[-1].char_end)


def _split(doc: ParsedDocument, section: Section, config: ChunkingConfig) -> list[Span]:
    if section.char_end - section.char_start <= config.max_chars:
        return [_whole([section])]
    packer = Packer(doc.text, max_chars=config.max_chars, overlap_chars=config.overlap_chars)
    splitter = SectionSplitter(doc.text, packer, max_chars=config.max_chars, min_chars=config.min_chars)
    if doc.source_type == "markdown":
        splitter.markdown(section.char_start, section.char_end)
    else:
        splitter.plain(section.char_start, section.char_end)
    packer.flush()
    return packer.spans


def _common_path(group: list[Section]) -> tuple[str, ...]:
    # A heading with no body of its own ("# Ownership" right before "## Moves") adds only its
    # title, which the child's path already carries; letting it in would cut the path to the parent.
    with_body = [section for section in group if _has_body(section)] or group
    common = list(with_body[0].path)
    for section in with_body[1:]:
        length = 0
        while length < min(len(common), len(section.path)) and common[length] == section.path[length]:
            length += 1
        del common[length:]
    return tuple(common) if common else with_body[0].path


def _has_body(section: Section) -> bool:
    lines = section.text.strip().split("\n", 1)
    return not section.path or (len(lines) == 2 and bool(lines[1].strip()))


def _pages(doc: ParsedDocument, group: list[Section], span: Span) -> tuple[int | None, int | None]:
    if doc.page_offsets:
        return page_of(doc.page_offsets, span.start), page_of(doc.page_offsets, max(span.end - 1, span.start))
    return group[0].page_start, group[-1].page_end

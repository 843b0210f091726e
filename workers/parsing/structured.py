"""Documents whose format has its own structure (slides, Word headings, web pages, e-book chapters,
sheets) into a ParsedDocument: each parser emits Blocks, rendered here as Markdown sections.

Every block becomes one section: its heading line (`#` per level of its path) then its Markdown body,
so the chunker splits it as Markdown (tables, code fences) and the section path is the format's own.
Where the format has pages or slides, each block carries its number and the document its page offsets,
so a chunk cut from inside a section still names its slide.

One driver (`parse_structured`) does what every such format needs, once: the archive guard for the ZIP-based
ones, a format library's exceptions turned into a readable ParseError, the title rule and the character
budget, checked after each block so a huge file stops where it passes the budget, not after its last part.
A format only reads: it yields Blocks and notes its own title, page count and warnings in a `Found`."""

import zipfile
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial

from workers.parsing.archive import ArchiveLimits, checked_archive
from workers.parsing.office import document_title, library_errors
from workers.parsing.types import ParsedDocument, Section, bounded, too_many_chars


@dataclass(frozen=True)
class Block:
    path: tuple[str, ...]  # outermost first, e.g. ("Lecture 3", "Ownership")
    body: str  # Markdown
    page: int | None = None  # 1-based slide or page number where the format has them


@dataclass
class Found:
    """What a format reader learns besides its blocks; read by the driver after the last block."""

    title: object = None  # the file's own title (core properties, <title>, the OPF's dc:title)
    page_count: int | None = None
    warnings: list[str] = field(default_factory=list)


# (the upload's bytes, the vetted archive of a ZIP-based format or None, what it found) -> its blocks
Reader = Callable[[bytes, zipfile.ZipFile | None, Found], Iterable[Block]]


@dataclass(frozen=True)
class StructuredFormat:
    what: str  # names the format in messages: "Word file"
    read: Reader
    zipped: bool = True  # an Office file or an e-book: every member vetted before the reader sees one


def parse_structured(
    fmt: StructuredFormat,
    data: bytes,
    *,
    filename: str,
    title: str | None = None,
    max_chars: int | None = None,
    max_memory_mb: int = 2048,
) -> ParsedDocument:
    """The reader's blocks as a ParsedDocument titled by `title`, else the file's own, else the file name;
    raises ParseError with a reason the user can read."""
    limits = ArchiveLimits.within_memory(max_memory_mb)
    archive = checked_archive(data, limits, what=fmt.what) if fmt.zipped else None
    found = Found()
    blocks: list[Block] = []
    total = 0
    with archive or nullcontext(), library_errors(fmt.what):
        for block in fmt.read(data, archive, found):
            blocks.append(block)
            total += sum(len(part) for part in block.path) + len(block.body)
            if max_chars is not None and total > max_chars:  # stop here, not after the last part
                raise too_many_chars(max_chars)
    return assemble(
        blocks, title=document_title(title, found.title, filename), page_count=found.page_count,
        warnings=found.warnings, max_chars=max_chars,
    )  # fmt: skip


def parser_for(fmt: StructuredFormat) -> Callable[..., ParsedDocument]:
    """`parse_structured` for one format: `parse_docx(data, filename=..., title=..., max_chars=...)`."""
    return partial(parse_structured, fmt)


def assemble(
    blocks: list[Block],
    *,
    title: str,
    page_count: int | None = None,
    warnings: list[str] | None = None,
    max_chars: int | None = None,
) -> ParsedDocument:
    parts: list[str] = []
    sections: list[Section] = []
    page_starts: dict[int, int] = {}
    offset = 0
    for block in blocks:
        path = tuple(bounded(" ".join(part.split())) for part in block.path if part.strip())
        heading = f"{'#' * min(len(path), 6)} {path[-1]}\n\n" if path else ""
        text = heading + block.body.strip() + "\n\n"
        if block.page is not None:
            page_starts.setdefault(block.page, offset)
        sections.append(
            Section(path=path, text=text, char_start=offset, char_end=offset + len(text),
                    page_start=block.page, page_end=block.page)
        )  # fmt: skip
        parts.append(text)
        offset += len(text)
        if max_chars is not None and offset > max_chars:
            raise too_many_chars(max_chars)
    return ParsedDocument(
        title=bounded(" ".join(title.split())) or "Untitled",
        text="".join(parts),
        sections=sections,
        page_count=page_count,
        warnings=list(warnings or []),
        source_type="markdown",
        page_offsets=_page_offsets(page_starts, page_count, offset),
    )


def _page_offsets(page_starts: dict[int, int], page_count: int | None, end: int) -> tuple[int, ...]:
    """Page i+1 starts at offsets[i]; a page with no block starts where the next one with a block does."""
    if not page_starts or not page_count:
        return ()
    offsets = [end] * page_count
    following = end
    for page in range(page_count, 0, -1):
        following = page_starts.get(page, following)
        offsets[page - 1] = following
    return tuple(offsets)

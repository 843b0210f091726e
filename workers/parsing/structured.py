"""Documents whose format has its own structure (slides, Word headings, web pages, e-book chapters,
sheets) into a ParsedDocument: each parser emits Blocks, rendered here as Markdown sections.

Every block becomes one section: its heading line (`#` per level of its path) then its Markdown body,
so the chunker splits it as Markdown (tables, code fences) and the section path is the format's own.
Where the format has pages or slides, each block carries its number and the document its page offsets,
so a chunk cut from inside a section still names its slide."""

from dataclasses import dataclass

from workers.parsing.types import ParsedDocument, Section, bounded, too_many_chars


@dataclass(frozen=True)
class Block:
    path: tuple[str, ...]  # outermost first, e.g. ("Lecture 3", "Ownership")
    body: str  # Markdown
    page: int | None = None  # 1-based slide or page number where the format has them


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

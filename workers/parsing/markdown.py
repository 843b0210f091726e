"""Markdown and plain text into heading-delimited sections.

Sections are cut at top-level heading tokens (ATX and setext) using markdown-it's line maps, so each
section's text is the raw source lines, heading line included; headings inside lists or quotes are
content, not structure.
"""

import functools
import re
from pathlib import PurePath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from workers.parsing.text import decode_text, line_starts, trim_span
from workers.parsing.types import HEADING_MAX_CHARS, ParsedDocument, Section, bounded

_SPACES = re.compile(r"\s+")


@functools.cache
def markdown_parser() -> MarkdownIt:
    """The shared parser (also used by the chunker to find block boundaries).

    CommonMark keeps maxNesting at 20: deeper lists/quotes are left untokenised instead of recursing,
    which is what keeps deep-nesting.md from hitting Python's recursion limit. Parsing does not mutate
    the instance, so one can serve every thread.
    """
    return MarkdownIt("commonmark").enable("table")


def parse_markdown(
    data: bytes, *, filename: str, title: str | None = None, max_chars: int | None = None
) -> ParsedDocument:
    text, warnings = decode_text(data, max_chars)
    tokens = markdown_parser().parse(text)
    starts = line_starts(text)

    def offset(line: int) -> int:
        return starts[line] if line < len(starts) else len(text)

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []  # (heading level, title) of the open headings
    first_h1: str | None = None
    path: tuple[str, ...] = ()
    section_start = 0
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        heading_line = token.map[0]
        _add_section(sections, text, path, section_start, offset(heading_line))
        level = int(token.tag[1:])
        heading = _heading_title(tokens[index + 1] if index + 1 < len(tokens) else None)
        if level == 1 and first_h1 is None and heading:
            first_h1 = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        path = tuple(title_ for _, title_ in stack if title_)  # an empty `#` adds no level
        section_start = offset(heading_line)
    _add_section(sections, text, path, section_start, len(text))
    return ParsedDocument(
        title=_pick_title(title, first_h1, filename),
        text=text,
        sections=sections,
        warnings=warnings,
        source_type="markdown",
    )


def parse_text(
    data: bytes, *, filename: str, title: str | None = None, max_chars: int | None = None
) -> ParsedDocument:
    """Plain text has no headings: one section with path ()."""
    text, warnings = decode_text(data, max_chars)
    sections: list[Section] = []
    _add_section(sections, text, (), 0, len(text))
    return ParsedDocument(
        title=_pick_title(title, None, filename),
        text=text,
        sections=sections,
        warnings=warnings,
        source_type="text",
    )


def _add_section(sections: list[Section], text: str, path: tuple[str, ...], start: int, end: int) -> None:
    start, end = trim_span(text, start, end)
    if start < end:
        sections.append(Section(path=path, text=text[start:end], char_start=start, char_end=end))


def _heading_title(inline: Token | None) -> str:
    """The heading's source text, whitespace collapsed (`code` marks kept: they are part of the name
    readers see and search for)."""
    if inline is None or inline.type != "inline":
        return ""
    # Only the start is kept (see bounded): collapsing the whole of a 1 MB heading is wasted work.
    return bounded(_SPACES.sub(" ", inline.content[: 4 * HEADING_MAX_CHARS]).strip())


def _pick_title(given: str | None, first_h1: str | None, filename: str) -> str:
    if given and given.strip():
        return bounded(given.strip())
    if first_h1:
        return first_h1
    return bounded(PurePath(filename).stem or filename)

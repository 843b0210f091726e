"""Where a PDF's headings are: outline entries located in the page text, or big-font lines.

Both sources end up as (level, title, page) entries; `heading_positions` turns them into character
offsets in the document text. Extracted text drops or adds spaces (XeTeX headings come out as
"Chapter1"), so titles are compared on letters and digits only, case-folded.
"""

import re
from collections import Counter
from dataclasses import dataclass

import pymupdf

from workers.parsing.types import OutOfMemory, is_out_of_memory

OutlineEntry = tuple[int, str, int]  # (level >= 1, title, 1-based page)

_NUMBER_PREFIX = re.compile(r"\s*(?:\d+|[A-Z])(?:\.\d+)*\.?\s")  # "1.1. ", "A.2 ", "12 "
_LABEL_LINE = re.compile(  # "Chapter 2", "AppendixB": the line above a chapter title
    r"\s*(?i:chapter|appendix|part|cap[ií]tulo|ap[eê]ndice|parte)\s*(?:\d+|[A-Z]|[IVXLC]+)\.?\s*"
)
_PAGE_NUMBER = re.compile(r"[0-9]+|[ivxlcdm]+")
_MAX_LINES_PER_TITLE = 3
_HEADING_MIN_RATIO = 1.15  # a heading's font is clearly larger than the body's
_HEADING_MAX_CHARS = 120
_MAX_LEVELS = 6


def compress(value: str) -> str:
    return "".join(char for char in value.casefold() if char.isalnum())


@dataclass
class _Line:
    start: int  # offset in the document text
    text: str
    key: str  # compressed text


def heading_positions(
    text: str, page_offsets: tuple[int, ...], outline: list[OutlineEntry]
) -> list[tuple[int, tuple[str, ...]]]:
    """(offset, heading path) per outline entry, in order; offsets never go backwards."""
    lines_cache: dict[int, list[_Line]] = {}
    stack: list[tuple[int, str]] = []
    result: list[tuple[int, tuple[str, ...]]] = []
    previous = -1
    for level, title, page in outline:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title.strip()))
        path = tuple(name for _, name in stack if name)
        position = previous if previous >= 0 else 0
        if 1 <= page <= len(page_offsets):
            key = compress(title)
            pages = [number for number in (page, page + 1) if number <= len(page_offsets)]
            for number in pages:
                if number not in lines_cache:
                    lines_cache[number] = _page_lines(text, page_offsets, number)
            # Outline targets often sit just above the heading, which a page break can push onto the
            # next page: a heading line on the target page, else on the next one, else a weaker match
            # (running header, title inside a line) on the target page, else the top of that page.
            found = None
            for number in pages:
                found = _locate(lines_cache[number], key, previous + 1)
                if found is not None:
                    break
            if found is None:
                found = _locate_weak(text, lines_cache[page], key, previous + 1)
            position = max(page_offsets[page - 1] if found is None else found, position)
        result.append((position, path))
        previous = position
    return result


def _page_lines(text: str, page_offsets: tuple[int, ...], page: int) -> list[_Line]:
    start = page_offsets[page - 1]
    end = page_offsets[page] if page < len(page_offsets) else len(text)
    lines: list[_Line] = []
    for line in text[start:end].split("\n"):
        lines.append(_Line(start, line, compress(line)))
        start += len(line) + 1
    return lines


def _header_lines(lines: list[_Line]) -> int:
    """How many lines at the top of the page are its running header (title + page number), 0 or 2."""
    return 2 if any(_PAGE_NUMBER.fullmatch(line.key) for line in lines[:2]) else 0


def _matches(lines: list[_Line], key: str, floor: int) -> list[int]:
    return [
        index
        for index, line in enumerate(lines)
        if line.start >= floor and key and _title_span(lines, index, key) is not None
    ]


def _locate(lines: list[_Line], key: str, floor: int) -> int | None:
    """Start of the first line (below the running header) that spells the heading."""
    header = _header_lines(lines)
    for index in _matches(lines, key, floor):
        if index < header:
            continue
        if index > 0 and lines[index - 1].start >= floor and _LABEL_LINE.fullmatch(lines[index - 1].text):
            index -= 1  # keep "Chapter 2" with its title
        return lines[index].start
    return None


def _locate_weak(text: str, lines: list[_Line], key: str, floor: int) -> int | None:
    """A heading only seen in the running header, or inside a longer line (run-in heading)."""
    matches = _matches(lines, key, floor)
    if matches:
        return lines[matches[-1]].start
    return _locate_anywhere(text, lines[_header_lines(lines) :], key, floor)


def _title_span(lines: list[_Line], index: int, key: str) -> int | None:
    """How many lines from `index` spell the title (optionally after a section number), or None."""
    joined = ""
    for count in range(1, _MAX_LINES_PER_TITLE + 1):
        if index + count > len(lines):
            return None
        joined += lines[index + count - 1].key
        if len(joined) > len(key) + 12:
            return None
        if joined.endswith(key):
            prefix = len(joined) - len(key)
            if prefix == 0:
                return count
            if prefix <= len(lines[index].key) and _NUMBER_PREFIX.match(lines[index].text + " "):
                return count
            return None
    return None


def _locate_anywhere(text: str, lines: list[_Line], key: str, floor: int) -> int | None:
    """The title inside a line (run-in heading, odd wrapping): the start of that line."""
    chars: list[str] = []
    where: list[int] = []  # offset in `text` of each compressed character
    for line in lines:
        for offset, char in enumerate(line.text):
            if line.start + offset >= floor:
                for folded in char.casefold():
                    if folded.isalnum():
                        chars.append(folded)
                        where.append(line.start + offset)
    found = "".join(chars).find(key)
    if found < 0:
        return None
    position = where[found]
    line_start = text.rfind("\n", 0, position) + 1
    return line_start if line_start >= floor else position


def font_size_outline(doc: pymupdf.Document, pages: list[int]) -> list[OutlineEntry]:
    """Headings guessed from font sizes, for PDFs without an outline.

    Body size = the most common size weighted by characters; short lines set clearly larger are
    headings, and their distinct sizes (largest first) become levels 1..6.
    """
    weights: Counter[float] = Counter()
    lines: list[tuple[int, int, float, str]] = []  # (page, block number, size, text)
    for page in pages:
        try:
            blocks = doc.load_page(page - 1).get_text("dict", flags=pymupdf.TEXT_MEDIABOX_CLIP)["blocks"]
        except Exception as error:  # a page the text pass could read but the layout pass cannot: no headings
            if is_out_of_memory(error):
                raise OutOfMemory(str(error)) from None
            continue
        for block_number, block in enumerate(blocks):
            for line in block.get("lines", []):
                line_weights: Counter[float] = Counter()
                for span in line["spans"]:
                    chars = len(span["text"].strip())
                    if chars:
                        line_weights[round(span["size"] * 2) / 2] += chars
                if line_weights:
                    weights.update(line_weights)
                    line_text = " ".join("".join(span["text"] for span in line["spans"]).split())
                    lines.append((page, block_number, line_weights.most_common(1)[0][0], line_text))
    if not weights:
        return []
    body = weights.most_common(1)[0][0]
    headings: list[tuple[int, int, float, str]] = []
    for page, block_number, size, line_text in lines:
        if size < body * _HEADING_MIN_RATIO or len(line_text) > _HEADING_MAX_CHARS:
            continue
        if not any(char.isalpha() for char in line_text):
            continue
        last = headings[-1] if headings else None
        wrapped = last is not None and last[:3] == (page, block_number, size)
        if last and wrapped and len(last[3]) + len(line_text) < _HEADING_MAX_CHARS:
            headings[-1] = (page, block_number, size, f"{last[3]} {line_text}")  # a wrapped heading
        else:
            headings.append((page, block_number, size, line_text))
    ranks = {size: rank for rank, size in enumerate(sorted({h[2] for h in headings}, reverse=True), start=1)}
    return [(min(ranks[size], _MAX_LEVELS), title, page) for page, _, size, title in headings]

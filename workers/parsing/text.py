"""Bytes to clean text for the text formats (Markdown, plain text), and small span helpers.

Everything that indexes text offsets (sections, chunks) works on the string returned here, so the
clean-up happens once, before any offset is taken.
"""

import re

from workers.parsing.types import ParseError, too_many_chars

NOT_UTF8 = "The file is not valid UTF-8 text. Save it as UTF-8 and upload again."
NOT_TEXT = "The file is not text (it contains binary data); upload a Markdown or plain-text file."
NO_TEXT = "The document has no text to index."

_SAMPLE_BYTES = 65536
# Control characters that never appear in real text files; NUL is counted apart because a few stray
# NULs are cleaned up (nul-bytes.md) while a file made mostly of them is binary or UTF-16.
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1f\x7f\ufffd]")
_BINARY_RATIO = 0.3


def decode_text(data: bytes, max_chars: int | None = None) -> tuple[str, list[str]]:
    """Strict UTF-8 (BOM allowed) with NULs removed and newlines as "\\n"; returns (text, warnings).
    More than `max_chars` characters is a ParseError, before any parsing."""
    if _looks_binary(data):
        raise ParseError(NOT_TEXT)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Guessing another encoding risks mojibake in the index; asking for UTF-8 is the honest answer.
        raise ParseError(NOT_UTF8) from None
    warnings: list[str] = []
    nul_count = text.count("\x00")
    if nul_count:
        # PostgreSQL text cannot store NUL, and it is never meaningful in a text document.
        text = text.replace("\x00", "")
        warnings.append(f"{nul_count} NUL character(s) were removed from the text")
    # markdown-it normalises newlines internally; doing it here keeps its line maps valid for our string.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ParseError(NO_TEXT)
    if max_chars is not None and len(text) > max_chars:
        raise too_many_chars(max_chars)
    return text, warnings


def _looks_binary(data: bytes) -> bool:
    sample = data[:_SAMPLE_BYTES]
    if not sample:
        return False
    if sample.count(0) / len(sample) > _BINARY_RATIO:
        return True
    decoded = sample.decode("utf-8", errors="replace")
    bad = len(_CONTROL.findall(decoded))
    # A Latin-1 file gives a few replacement characters per accented word; random bytes give mostly.
    return bad / max(len(decoded), 1) > _BINARY_RATIO


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink [start, end) past leading blank lines and trailing whitespace.

    Leading spaces of the first non-blank line are kept: they can be meaningful (indented code).
    """
    while end > start and text[end - 1].isspace():
        end -= 1
    pos = start
    while pos < end and text[pos].isspace():
        if text[pos] == "\n":
            start = pos + 1
        pos += 1
    return (start, end) if start < end else (start, start)


def line_starts(text: str) -> list[int]:
    """Offsets where each line of `text` begins (line i is text[starts[i]:starts[i+1]])."""
    starts = [0]
    starts.extend(match.end() for match in re.finditer("\n", text))
    return starts


_BLANK_RUNS = re.compile(r"\n{3,}")


def clean_page(raw: str) -> str:
    """A page's extracted (or recognised) text: no NULs, "\\n" newlines, no trailing spaces, at most
    one blank line in a row."""
    raw = raw.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    lines = "\n".join(line.rstrip() for line in raw.split("\n"))
    return _BLANK_RUNS.sub("\n\n", lines).strip()


def describe_pages(pages: list[int]) -> str:
    """[3, 4, 5, 9] -> "pages 3-5, 9"."""
    ranges: list[str] = []
    start = previous = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == previous + 1:
            previous = page
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if page is not None:
            start = previous = page
    return ("page " if len(pages) == 1 else "pages ") + ", ".join(ranges)

"""A piece of a chunk's Markdown short enough to show beside an answer, that still renders as the book
shows it: its own line breaks kept (a passage used to be sent as one whitespace-collapsed run, which put
a heading, a paragraph and a code block on one line), cut at a line start (else between words), with the
fence of a code block the cut opened, or left open, put back, and never half of a `$$` display formula.

    window(text, at, chars) -> at most about `chars` characters of `text` from near `at`, with "…" where
    it was cut.

`find_span` locates a whitespace-collapsed sentence (agents/qa/evidence.py picks sentences from the
flattened text: Markdown wraps lines mid-sentence) in the original text."""

import re
from typing import NamedTuple

# A line that opens or closes a fenced code block (CommonMark: three or more backticks or tildes).
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})([^\n]*)$", re.M)
# A line that starts a Markdown block: "…" glued to it would break it, so it goes on a line of its own.
_BLOCK_START = re.compile(r"[ \t]{4}|[ \t]*(#{1,6}\s|[-*+]\s|\d+[.)]\s|>|\||`{3}|~{3}|\$\$|\\\[)")
_CLOSING_LINE = re.compile(r"[ \t]*(`{3,}|~{3,}|\$\$|\\\])")
_LINE_SNAP = 80  # how far back a cut may move to start at a line's beginning (else it starts at a word)
_ELLIPSIS = "…"


def find_span(text: str, sentence: str) -> tuple[int, int] | None:
    """Where `sentence` (its words, any whitespace between them) is in `text`: (start, end), or None."""
    parts = sentence.split()
    if not parts:
        return None
    found = re.search(r"\s+".join(map(re.escape, parts)), text)
    return found.span() if found else None


class _Block(NamedTuple):
    start: int  # the opening fence line's start
    body: int  # the first code line's start
    end: int  # the closing fence line's end (len(text) for an unclosed block)
    opener: str  # the opening fence line, info string included ("```python")
    markup: str  # its backticks or tildes


def _fences(text: str) -> list[_Block]:
    """The fenced code blocks, in order. An unclosed block runs to the end, as CommonMark has it."""
    blocks: list[_Block] = []
    opener: re.Match[str] | None = None

    def block(end: int) -> _Block:
        assert opener is not None
        return _Block(opener.start(), opener.end() + 1, end, opener.group(0).strip(), opener.group(1))

    for line in _FENCE.finditer(text):
        if opener is None:
            opener = line
            continue
        markup, opening = line.group(1), opener.group(1)
        if markup[0] == opening[0] and len(markup) >= len(opening) and not line.group(2).strip():
            blocks.append(block(line.end()))
            opener = None
    if opener is not None:
        blocks.append(block(len(text)))
    return blocks


def _inside(blocks: list[_Block], at: int) -> _Block | None:
    """The code block whose code (the lines after its opening fence) holds offset `at`."""
    return next((block for block in blocks if block.body <= at < block.end), None)


def _snap_start(text: str, at: int, in_code: bool) -> int:
    """A line's start at or before `at` if near (always, in code), else the next word's start."""
    line = text.rfind("\n", 0, at) + 1
    if at - line <= _LINE_SNAP or in_code:
        return line
    space = re.compile(r"\s+").search(text, at)
    return space.end() if space else at


def _snap_end(text: str, start: int, end: int) -> int:
    """A line's end at or before `end` if near, else the end of the last whole word."""
    if end >= len(text):
        return len(text)
    line = text.rfind("\n", start, end)
    if line > start and end - line <= _LINE_SNAP:
        return line
    space = text.rfind(" ", start, end)
    return space if space > start else end


def _display_math(text: str, code: list[_Block]) -> list[tuple[int, int]]:
    """The `$$ … $$` formulas outside code: (start, end) each."""
    marks = [m.start() for m in re.finditer(r"\$\$", text) if _inside(code, m.start()) is None]
    return [(a, b + 2) for a, b in zip(marks[::2], marks[1::2], strict=False)]


def window(text: str, at: int, chars: int) -> str:
    """About `chars` characters of `text` starting near `at` (moved back to fill `chars` near the end),
    cut between lines or words, its code blocks fenced and its display formulas whole; "…" marks each
    cut. Moving the start back to a line's beginning, a reopened or a closing fence line add to the
    length. `text` comes stripped."""
    if len(text) <= chars:
        return text
    code = _fences(text)
    formulas = _display_math(text, code)
    start = max(0, min(at, len(text) - chars))
    start = next((a for a, b in formulas if a < start < b), start)  # a formula the cut falls in starts it
    budget_end = start + chars  # a start moved back to a line's beginning takes nothing from the end
    if start:
        start = _snap_start(text, start, _inside(code, start) is not None)
    end = _snap_end(text, start, max(budget_end, start + chars))
    end = next((a if a > start else b for a, b in formulas if a < end < b), end)  # not half a formula
    end = next((b.start for b in code if start < b.start <= end <= b.body), end)  # nor a bare fence line
    piece = text[start:end].strip("\n")
    opened, open_at_end = _inside(code, start), _inside(code, end)
    if opened is not None:
        piece = f"{opened.opener}\n{piece}"
    if open_at_end is not None:
        piece = f"{piece}\n{open_at_end.markup}"
    if start > 0:
        # "…" glued to a heading, list item or fence line would break it: it gets a paragraph of its own.
        own_line = opened is not None or _BLOCK_START.match(piece) is not None
        piece = f"{_ELLIPSIS}\n\n{piece}" if own_line else f"{_ELLIPSIS}{piece}"
    if end < len(text):  # likewise after a fence or a formula's closing line
        own_line = open_at_end is not None or _CLOSING_LINE.match(piece.rsplit("\n", 1)[-1]) is not None
        piece = f"{piece}\n\n{_ELLIPSIS}" if own_line else f"{piece}{_ELLIPSIS}"
    return piece

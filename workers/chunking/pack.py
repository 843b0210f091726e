"""Greedy packing of one long section's blocks into chunk spans, with overlap between them.

A chunk is always `prefix + text[start:end] + suffix`: a slice of the document plus, for pieces of a
code block split across chunks, a synthetic fence line that reopens or closes it.
"""

import re
from dataclasses import dataclass

# End of a sentence: terminal punctuation, optional closing quotes/brackets, then whitespace.
SENTENCE_END = re.compile(r"([.!?…][\"'”’)\]]*)\s+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Unit:
    """A block (or a piece of one) that is never cut further once handed to the packer."""

    start: int
    end: int
    code: bool = False  # overlap is never taken from code: half a code block misleads
    prefix: str = ""  # reopening fence of a continued code block: must start a chunk
    suffix: str = ""  # closing fence of an interrupted code block: must end a chunk

    @property
    def size(self) -> int:
        return len(self.prefix) + self.end - self.start + len(self.suffix)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    prefix: str = ""
    suffix: str = ""

    def render(self, text: str) -> str:
        return f"{self.prefix}{text[self.start : self.end]}{self.suffix}"


class Packer:
    """Collects units into chunks of at most max_chars (overlap excluded)."""

    def __init__(self, text: str, *, max_chars: int, overlap_chars: int) -> None:
        self.text = text
        self.max_chars = max_chars
        self.overlap_chars = overlap_chars
        self.spans: list[Span] = []
        self._units: list[Unit] = []
        self._previous_last: Unit | None = None

    def room(self, start: int) -> int:
        """How many characters a unit starting at `start` may have and still join the open chunk."""
        if not self._units:
            return self.max_chars
        first = self._units[0]
        return self.max_chars - len(first.prefix) - (start - first.start)

    def add(self, unit: Unit) -> None:
        if self._units:
            first, last = self._units[0], self._units[-1]
            size = len(first.prefix) + unit.end - first.start + len(unit.suffix)
            if unit.prefix or last.suffix or size > self.max_chars:
                self.flush()
        self._units.append(unit)

    def flush(self) -> None:
        if not self._units:
            return
        first, last = self._units[0], self._units[-1]
        start = first.start
        previous = self._previous_last
        if previous is not None and not previous.code and not first.prefix:
            start = self._overlap_start(previous, first.start)
        self.spans.append(Span(start, last.end, first.prefix, last.suffix))
        self._previous_last = last
        self._units = []

    def _overlap_start(self, previous: Unit, start: int) -> int:
        overlap = self._tail_start(previous, start)
        # A list item or HTML comment can hold a fence; half of one would unbalance this chunk.
        tail = self.text[overlap : previous.end]
        return start if "```" in tail or "~~~" in tail else overlap

    def _tail_start(self, previous: Unit, start: int) -> int:
        """Where the repeated tail of the previous chunk begins: a sentence start if one is close
        enough, else a word start; only inside the previous chunk's last unit (never from code)."""
        low = max(previous.start, start - self.overlap_chars)
        if low >= previous.end:
            return start
        if low == previous.start:
            return low  # the whole last block fits: repeat it
        sentence = SENTENCE_END.search(self.text, low, previous.end)
        if sentence is not None and sentence.end() < previous.end:
            return sentence.end()
        if self.text[low - 1].isspace():
            return low
        word = _WHITESPACE.search(self.text, low, previous.end)
        return word.end() if word is not None and word.end() < previous.end else start

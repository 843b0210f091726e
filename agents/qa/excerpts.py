"""What of the retrieved chunks the answer model reads: the sentences that bear on the question,
within one character budget shared by all the shown chunks.

Every token of a prompt costs prefill time on the local model before the first token comes back
(~8-15 ms each on two cores), and the answer to a question is usually a sentence or two of a chunk.
So each chunk is cut to a window of whole sentences (a code block or a list counts as one) around the
one sharing most words with the question; the best-ranked chunk's window grows first, then the next
chunk's, round after round, until the budget is spent. Citations stay at chunk level: a window is
shown under its chunk's id."""

import re
from dataclasses import dataclass

from core.text.words import content_words, covers, split_sentences, words


@dataclass
class _Window:
    units: list[str]
    start: int
    end: int  # inclusive
    size: int

    def grow(self, room: int) -> int:
        """Takes the next unit forwards (a lead-in is usually followed by its substance), else the one
        before, if it fits in `room`; the characters taken, 0 when neither fits."""
        for index in (self.end + 1, self.start - 1):
            if 0 <= index < len(self.units) and len(self.units[index]) + 1 <= room:
                self.start, self.end = min(self.start, index), max(self.end, index)
                taken = len(self.units[index]) + 1
                self.size += taken
                return taken
        return 0

    def text(self, limit: int) -> str:
        return trim("".join(self.units[self.start : self.end + 1]).strip(), limit)


def select(texts: list[str], question: str, budget: int, *, chunk_chars: int) -> list[str]:
    """Each chunk text's window for the question, in the given (rank) order: together at most
    `budget` characters, none longer than `chunk_chars`; the first chunk's best sentence is shown even
    when it alone is longer (trimmed). A chunk that gets no room gets an empty text."""
    wanted = content_words(question)
    windows = [_seed(text, wanted) for text in texts]
    left = budget
    for rank, window in enumerate(windows):
        if rank == 0 or window.size <= left:
            left -= min(window.size, left)
        else:  # its best sentence alone does not fit
            window.size = 0
    growing = [w for w in windows if w.size]
    while growing and left > 0:
        still = []
        for window in growing:
            taken = window.grow(min(left, chunk_chars - window.size))
            left -= taken
            if taken:
                still.append(window)
        growing = still
    return [window.text(min(chunk_chars, budget)) if window.size else "" for window in windows]


def best_window(text: str, question: str, chars: int) -> str:
    """One chunk's window for the question within `chars`."""
    return select([text], question, chars, chunk_chars=chars)[0]


def _seed(text: str, wanted: list[str]) -> _Window:
    units = _units(text)
    if not units:
        return _Window([""], 0, 0, 0)
    scores = [sum(covers(w, set(words(unit))) for w in wanted) for unit in units]
    best = max(range(len(units)), key=lambda i: (scores[i], -i))
    return _Window(units, best, best, len(units[best]))


def _units(text: str) -> list[str]:
    """Paragraphs split into sentences; a fenced code block or a list stays one unit. A unit that ends
    its paragraph ends with a blank line, so joining units is concatenation."""
    units: list[str] = []
    for paragraph in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not paragraph:
            continue
        whole = paragraph.startswith(("```", "    ", "- ", "* ", "|")) or "\n```" in paragraph
        pieces = [paragraph] if whole else split_sentences(" ".join(paragraph.split()))
        units.extend(piece + " " for piece in pieces[:-1])
        units.append(pieces[-1] + "\n\n")
    return units


def trim(text: str, chars: int) -> str:
    """At most `chars` characters, an ellipsis marking a cut."""
    text = text.strip()
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"

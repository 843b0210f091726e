"""Finding, for one claim, the passage of the given chunks that could support it: no model call.

The candidates are every sentence of every chunk and every pair of adjacent sentences; the best is
the one holding most of the claim's key terms (crudely stemmed, numbers included). Its coverage is
also the first test: a claim whose terms are mostly absent from every chunk is not supported by them,
whatever a model would say, and the model is asked only about claims that pass it."""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.text.words import split_sentences, term_coverage

# Sentences that state no fact: a "not found" reply, or a question back.
_NO_FACT = re.compile(
    r"could not find|couldn't find|not found|no information|does not (say|mention|contain)"
    r"|não (encontrei|foi encontrad|há informaç)|não (diz|menciona)|\?\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Passage:
    chunk_id: int
    text: str
    coverage: float  # share of the claim's key terms found in the text, 0..1


def states_no_fact(sentence: str) -> bool:
    return _NO_FACT.search(sentence) is not None


def sentences_of(text: str) -> list[str]:
    # Clauses too (a pair of adjacent ones is a window as well), and sentences that extraction glued.
    return split_sentences(text, clauses=True, glued=True)


def windows(chunks: Sequence[tuple[int, str]], max_chars: int) -> list[tuple[int, str]]:
    """Every sentence of every chunk and every pair of adjacent sentences, with its chunk id."""
    found: list[tuple[int, str]] = []
    for chunk_id, text in chunks:
        sentences = sentences_of(text)
        for start in range(len(sentences)):
            for size in (1, 2):
                if start + size <= len(sentences):
                    found.append((chunk_id, " ".join(sentences[start : start + size])[:max_chars]))
    return found


def best_passage(claim: str, chunks: Sequence[tuple[int, str]], max_chars: int) -> Passage | None:
    """The sentence or adjacent pair that covers the claim best (ties: the shorter), or None when
    the claim has no key term to look for or there are no chunks."""
    best: Passage | None = None
    for chunk_id, window in windows(chunks, max_chars):
        coverage = term_coverage(claim, window)
        if coverage is None:
            return None
        if best is None or (coverage, -len(window)) > (best.coverage, -len(best.text)):
            best = Passage(chunk_id, window, coverage)
    return best

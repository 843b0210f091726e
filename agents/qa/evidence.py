"""The passages a student reads beside (or instead of) an answer, each with the sentence that bears
most on the question or the answer highlighted: sent as the stream's `evidence` event before the model
writes, kept with a medium answer (its deciding sentence) and a low one (what bears on the question,
and which options the passages state)."""

import re
from typing import Any

from pydantic import Field

from agents.common.citations import ref_fields
from agents.qa.options import Choice
from core.retrieval import Candidate
from core.store.content.refs import ChunkRef
from core.text.markdown_window import find_span, window
from core.text.words import split_sentences, term_coverage

PASSAGE_CHARS = 600
_LEADING_HEADINGS = re.compile(r"(?:[ \t]{0,3}#{1,6}[ \t][^\n]*\n\s*)+")
OPTION_STATED = 0.75  # share of an option's words one sentence must hold to count as stating it


class Passage(ChunkRef):
    text: str = Field(description="the chunk's Markdown around the highlighted sentence, its lines kept")
    highlight: str = Field(description="the sentence bearing most on the question (or answer), as in `text`")


def best_sentence(text: str, about: str) -> tuple[str, float]:
    """The sentence of `text` holding the largest share of `about`'s words, with that share."""
    best, share = "", -1.0
    # Flattened first: Markdown wraps its lines mid-sentence, and a line end would cut a sentence.
    for sentence in split_sentences(" ".join(text.split())):
        covered = term_coverage(about, sentence) or 0.0
        if covered > share:
            best, share = sentence, covered
    return best.strip(), max(share, 0.0)


def around(text: str, sentence: str, chars: int = PASSAGE_CHARS) -> tuple[str, str]:
    """About `chars` of `text` (Markdown, its lines kept: the app renders it as the book shows it)
    keeping `sentence` inside, and the sentence as that text has it (its line breaks too), less the
    headings it ran on from: sentences are cut from the flattened text, where a heading has no stop."""
    body = text.strip()
    span = find_span(body, sentence)
    if span is None:
        return window(body, 0, chars), sentence
    start, end = span
    headings = _LEADING_HEADINGS.match(body, start, end)
    if headings and headings.end() < end:
        start = headings.end()
    return window(body, max(0, start - chars // 4), chars), body[start:end]


def passage(chunk: Candidate, about: str) -> Passage:
    sentence, _ = best_sentence(chunk.text, about)
    text, highlight = around(chunk.text, sentence)
    return Passage(**ref_fields(chunk), text=text, highlight=highlight)


def passages(chunks: list[Candidate], about: str) -> list[Passage]:
    return [passage(chunk, about) for chunk in chunks]


def options_stated(choice: Choice, chunks: list[Candidate]) -> list[dict[str, Any]]:
    """Each option some shown passage states nearly word for word: its letter, the chunk and the
    sentence. Word overlap tells "mentions", not "contradicts"; the student reads the sentence."""
    stated: list[dict[str, Any]] = []
    for letter, option in zip(choice.letters, choice.options, strict=True):
        found = [(best_sentence(chunk.text, option), chunk.chunk_id) for chunk in chunks]
        if not found:
            continue
        (sentence, share), chunk_id = max(found, key=lambda item: item[0][1])
        if share >= OPTION_STATED:
            stated.append({"letter": letter, "chunk_id": chunk_id, "sentence": sentence})
    return stated

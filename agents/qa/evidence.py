"""The passages a student reads beside (or instead of) an answer, each with the sentence that bears
most on the question or the answer highlighted: sent as the stream's `evidence` event before the model
writes, kept with a medium answer (its deciding sentence) and a low one (what bears on the question,
and which options the passages state)."""

from typing import Any

from agents.common.citations import ref_fields
from agents.qa.options import Choice
from core.retrieval import Candidate
from core.store.content.refs import ChunkRef
from core.text.words import split_sentences, term_coverage

PASSAGE_CHARS = 600
OPTION_STATED = 0.75  # share of an option's words one sentence must hold to count as stating it


class Passage(ChunkRef):
    text: str  # the chunk's text around the highlighted sentence
    highlight: str  # the sentence that bears most on the question (or the answer)


def best_sentence(text: str, about: str) -> tuple[str, float]:
    """The sentence of `text` holding the largest share of `about`'s words, with that share."""
    best, share = "", -1.0
    # Flattened first: Markdown wraps its lines mid-sentence, and a line end would cut a sentence.
    for sentence in split_sentences(" ".join(text.split())):
        covered = term_coverage(about, sentence) or 0.0
        if covered > share:
            best, share = sentence, covered
    return best.strip(), max(share, 0.0)


def around(text: str, sentence: str, chars: int = PASSAGE_CHARS) -> str:
    """At most `chars` of `text`, keeping `sentence` inside."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    start = max(0, flat.find(" ".join(sentence.split())) - chars // 4)
    piece = flat[start : start + chars]
    return ("…" if start else "") + piece + ("…" if start + chars < len(flat) else "")


def passage(chunk: Candidate, about: str) -> Passage:
    sentence, _ = best_sentence(chunk.text, about)
    return Passage(**ref_fields(chunk), text=around(chunk.text, sentence), highlight=sentence)


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

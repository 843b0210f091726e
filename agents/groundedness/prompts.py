"""What the judge is asked, and the flat shape of its reply.

The application splits the answer into sentences and the model checks each one: a 1.5B model asked to
list an answer's claims itself pads the list with sentences about the task ("The statements are
supported") and spends output tokens copying the claims. Per sentence, the model names the excerpt and
copies its closest sentence before it gives the verdict (JSON fields are generated in schema order, so
the quote comes first). The quote is what the application checks: short of evidence, the small model
"quotes" the claim itself, which the chunk does not contain; and a second call compares the claim with
the quote alone, an easier task than one sentence against every excerpt."""

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, conlist, create_model

from agents.question_evaluator.prompts import best_window

Verdict = Literal["supported", "not_supported", "no_claim"]


class SentenceCheck(BaseModel):
    sentence: int = Field(description="number of the answer sentence")
    excerpt: int = Field(description="number in brackets of the excerpt closest to the sentence")
    quote: str = Field(description="the sentence of that excerpt closest to it, copied")
    verdict: Verdict


class JudgeReply(BaseModel):
    checks: list[SentenceCheck]
    relevance: float = Field(description="0 to 1: how well the answer addresses the question")


def reply_schema(sentences: int, chunk_ids: Sequence[int]) -> type[JudgeReply]:
    """Exactly one check per sentence: enforced by the grammar on llama.cpp, by validation (and the
    retry with the error shown) elsewhere. The excerpt is one of the given ids in the schema, which the
    grammar enforces: left free, the 1.5B model answers 0 ("none") even for a claim it calls supported;
    validation stays lenient, so elsewhere an invented id is dropped rather than failing the reply."""
    excerpt = Field(
        description="number in brackets of the excerpt closest to the sentence",
        json_schema_extra={"enum": list(chunk_ids) or [0]},
    )
    check = create_model("SentenceCheck", __base__=SentenceCheck, excerpt=(int, excerpt))
    checks = conlist(check, min_length=sentences, max_length=sentences)
    return create_model("JudgeReply", __base__=JudgeReply, checks=(checks, ...))


SYSTEM = (
    "You check whether each sentence of an answer is supported by the excerpts it was written from."
    " Reply with JSON.\n"
    "checks: one item per numbered answer sentence, in order:\n"
    "- sentence: its number.\n"
    "- excerpt: the number in brackets of the excerpt closest to it.\n"
    "- quote: the sentence of that excerpt closest to it, copied from the excerpt.\n"
    "- verdict: supported if the excerpts state it, with the same numbers and the same direction;"
    " not_supported if they say something different or do not say it; no_claim if the sentence states"
    " no fact (it says the information was not found, or asks a question).\n"
    "relevance: 0 to 1, how well the answer addresses the question."
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def answer_sentences(answer: str, limit: int) -> list[str]:
    """The answer's sentences (list items count as sentences); past `limit`, the rest is one sentence
    so that nothing the answer says goes unchecked."""
    parts = [_BULLET.sub("", part).strip() for part in _SENTENCE_END.split(answer)]
    sentences = [part for part in parts if re.search(r"\w", part)]
    if len(sentences) > limit:
        sentences = [*sentences[: limit - 1], " ".join(sentences[limit - 1 :])]
    return sentences


def judge_messages(
    *, question: str, sentences: Sequence[str], chunks: Sequence[tuple[int, str]], chunk_chars: int
) -> list[BaseMessage]:
    """Excerpts first, the answer last, where a small model attends most."""
    answer = " ".join(sentences)
    excerpts = "\n".join(f"[{i}] {best_window(text, answer, chunk_chars)}" for i, text in chunks)
    numbered = "\n".join(f"{n}. {sentence}" for n, sentence in enumerate(sentences, start=1))
    parts = [
        f"Excerpts:\n{excerpts}" if chunks else "Excerpts: (none)",
        f"Question: {question}",
        f"Answer sentences:\n{numbered}",
        "Check each answer sentence against the excerpts.",
    ]
    return [SystemMessage(content=SYSTEM), HumanMessage(content="\n\n".join(parts))]


class Entailment(BaseModel):
    verdict: Literal["yes", "no"]


ENTAILMENT_SYSTEM = (
    "You compare a claim with a sentence from a source. Reply with JSON.\n"
    "verdict: yes if the source sentence states the claim, with the same numbers and the same direction"
    " of effect; no if it states something else, the opposite, or only part of it."
)


def entailment_messages(*, quote: str, claim: str) -> list[BaseMessage]:
    """The second look: one claim against the one sentence the first call quoted for it. A 1.5B model
    judging every sentence against every excerpt at once calls nearly everything supported; side by
    side, two sentences are an easier comparison."""
    asked = f"Source sentence: {quote}\n\nClaim: {claim}\n\nDoes the source sentence state the claim?"
    return [SystemMessage(content=ENTAILMENT_SYSTEM), HumanMessage(content=asked)]

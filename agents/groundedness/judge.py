"""The groundedness judge: the application splits the answer into sentences, one structured call
checks each against the chunks, and the application computes the scores.

Definitions (the model never gives a score it could miscount):
- each sentence of the answer is a claim, except the ones the model marks as stating no fact (e.g.
  "I could not find this in the material");
- a claim counts as supported only if the model says so AND cites a chunk it was given AND its quote
  was copied from that chunk: a "supported" without a citation, or with a quote the chunk does not
  contain, is an unverifiable assertion, so it counts as unsupported; ids of chunks the judge was not
  given are dropped (and reported in invented_chunk_ids);
- groundedness = supported claims / claims; an answer with no claims asserts nothing that could be
  wrong, so its groundedness is 1.0 and it is never flagged;
- hallucination_risk = 1 - groundedness (relevance is about answering the question, not about
  inventing, so it does not enter the risk);
- flagged = hallucination_risk > RISK_FLAG_THRESHOLD (0.7): fewer than 30 % of the claims supported."""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.groundedness.config import JudgeConfig
from agents.groundedness.prompts import (
    Entailment,
    SentenceCheck,
    answer_sentences,
    entailment_messages,
    judge_messages,
    reply_schema,
)
from core.llm import StructuredMode
from core.structured import TokenUsage, ask_structured

RISK_FLAG_THRESHOLD = 0.7

QUOTE_OVERLAP = 0.6  # share of a quote's word trigrams that must occur in the cited chunk

_BRACKETED = re.compile(r"\[(\d+)\]")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class JudgeChunk:
    id: int
    text: str


class ClaimVerdict(BaseModel):
    claim: str  # a sentence of the answer
    supported: bool  # after the application's check: a supported claim cites a given chunk
    chunk_ids: list[int]  # only ids of chunks the judge was given


class Judgement(BaseModel):
    claims: list[ClaimVerdict]
    groundedness: float  # share of supported claims; 1.0 when the answer makes no claims
    relevance: float  # 0-1, the model's rating of how well the answer addresses the question
    hallucination_risk: float  # 1 - groundedness
    flagged: bool  # hallucination_risk > RISK_FLAG_THRESHOLD
    invented_chunk_ids: list[int] = Field(default_factory=list)  # cited by the model, never given to it


def _unit(value: float) -> float:
    """Clamped to 0..1; a reply like 80 is read as 80 %."""
    if 1.5 < value <= 100:
        value /= 100
    return min(1.0, max(0.0, value))


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    return {tuple(words[i : i + 3]) for i in range(max(len(words) - 2, 1))}


def quoted_from(quote: str, text: str) -> bool:
    """Whether the quote was copied from the text: most of its word trigrams occur there. A 1.5B judge
    that has no evidence tends to "quote" the claim itself, which this rejects unless the text says it
    in the same words."""
    wanted = _trigrams(quote)
    return bool(_WORD.search(quote)) and len(wanted & _trigrams(text)) >= QUOTE_OVERLAP * len(wanted)


def score_checks(
    sentences: Sequence[str], checks: Sequence[SentenceCheck], *, relevance: float, chunks: Mapping[int, str]
) -> Judgement:
    """Checks pair with sentences by position (the reply has exactly one per sentence)."""
    claims: list[ClaimVerdict] = []
    invented: list[int] = []
    for sentence, check in zip(sentences, checks, strict=False):
        if check.verdict == "no_claim":
            continue
        # A small model sometimes cites inside the quote ("[2] The ...") rather than in `excerpt`.
        cited = [i for i in (check.excerpt, *map(int, _BRACKETED.findall(check.quote))) if i]
        valid = list(dict.fromkeys(i for i in cited if i in chunks))
        invented.extend(i for i in dict.fromkeys(cited) if i not in chunks and i not in invented)
        quote = _BRACKETED.sub(" ", check.quote)
        backed = [i for i in valid if quoted_from(quote, chunks[i])]
        supported = check.verdict == "supported" and bool(backed)
        chunk_ids = backed if supported else []
        claims.append(ClaimVerdict(claim=sentence, supported=supported, chunk_ids=chunk_ids))
    groundedness = sum(c.supported for c in claims) / len(claims) if claims else 1.0
    risk = 1.0 - groundedness
    return Judgement(
        claims=claims,
        groundedness=round(groundedness, 4),
        relevance=round(_unit(relevance), 4),
        hallucination_risk=round(risk, 4),
        flagged=risk > RISK_FLAG_THRESHOLD,
        invented_chunk_ids=invented,
    )


async def judge_answer(
    llm: BaseChatModel,
    *,
    question: str,
    answer: str,
    chunks: Sequence[JudgeChunk],
    mode: StructuredMode,
    usage: TokenUsage | None = None,
    config: JudgeConfig = JudgeConfig(),
) -> Judgement:
    """Raises core.structured.StructuredOutputError when the reply is malformed twice."""
    sentences = answer_sentences(answer, config.max_sentences)
    if not sentences:  # nothing said, nothing to check
        return score_checks([], [], relevance=0.0, chunks={})
    messages = judge_messages(
        question=question,
        sentences=sentences,
        chunks=[(c.id, c.text) for c in chunks],
        chunk_chars=config.chunk_chars,
    )
    schema = reply_schema(len(sentences), [c.id for c in chunks])
    reply = await ask_structured(llm, schema, messages, mode=mode, usage=usage)
    texts = {c.id: c.text for c in chunks}
    checks = list(reply.checks)
    if config.second_look:
        for n, (sentence, check) in enumerate(zip(sentences, checks, strict=False)):
            if check.verdict != "supported" or not quoted_from(check.quote, texts.get(check.excerpt, "")):
                continue  # nothing to confirm: scored unsupported (or no claim) anyway
            look = entailment_messages(quote=_BRACKETED.sub(" ", check.quote), claim=sentence)
            confirmed = await ask_structured(llm, Entailment, look, mode=mode, usage=usage)
            if confirmed.verdict == "no":
                checks[n] = check.model_copy(update={"verdict": "not_supported"})
    return score_checks(sentences, checks, relevance=reply.relevance, chunks=texts)

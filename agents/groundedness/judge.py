"""The groundedness judge: the application splits the answer into claims (its sentences) and finds,
for each, the passage of the given chunks that covers it best; the model only answers, claim by
claim, whether that passage states it; the application computes the scores.

Definitions (the model never gives a score it could miscount):
- each sentence of the answer is a claim, except those that state no fact ("I could not find this
  in the material", a question back);
- a claim is supported when it is close enough to the chunks — e5 cosine to its closest passage at
  least `min_similarity` when the judge has the embedding model, else the best passage holds at least
  `min_coverage` of its key terms — AND the model, shown the claim beside the passage that covers
  most of its key terms, says the passage states it (and, given the contrast check, does not score
  the claim clearly below its own opposite there); its chunk id is the passage's chunk (never an id
  the model made up: the model names none);
- groundedness = supported claims / claims; an answer with no claims asserts nothing that could be
  wrong, so its groundedness is 1.0 and it is never flagged;
- hallucination_risk = 1 - groundedness (relevance is about answering the question, not about
  inventing, so it does not enter the risk);
- flagged = hallucination_risk > RISK_FLAG_THRESHOLD (0.7): fewer than 30 % of the claims supported;
- relevance = share of the question's key terms the answer takes up (no model call).

Why this shape: a 1.5B model asked to check every sentence against every excerpt at once called
nearly everything supported, or cited nothing (0.45-0.61 accuracy on the SciFact dev cases of
evals/groundedness_judge.py); one claim beside one passage is a comparison it can make."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.common.contrast import ContrastCheck
from agents.groundedness.config import JudgeConfig
from agents.groundedness.evidence import Passage, best_passage, states_no_fact, windows
from agents.groundedness.prompts import Entailment, answer_sentences, entailment_messages
from core.llm.chat import StructuredMode
from core.llm.structured import TokenUsage, ask_structured
from core.text.words import term_coverage

RISK_FLAG_THRESHOLD = 0.7


@dataclass(frozen=True)
class JudgeChunk:
    id: int
    text: str


class ClaimVerdict(BaseModel):
    claim: str  # a sentence of the answer
    supported: bool
    chunk_ids: list[int]  # the chunk whose passage supports it; [] when unsupported


class Judgement(BaseModel):
    claims: list[ClaimVerdict]
    groundedness: float  # share of supported claims; 1.0 when the answer makes no claims
    relevance: float  # 0-1: share of the question's key terms the answer takes up
    hallucination_risk: float  # 1 - groundedness
    flagged: bool  # hallucination_risk > RISK_FLAG_THRESHOLD
    invented_chunk_ids: list[int] = Field(default_factory=list)  # kept for the API; the model names none


def score_claims(claims: Sequence[ClaimVerdict], *, relevance: float) -> Judgement:
    groundedness = sum(c.supported for c in claims) / len(claims) if claims else 1.0
    risk = 1.0 - groundedness
    return Judgement(
        claims=list(claims),
        groundedness=round(groundedness, 4),
        relevance=round(min(1.0, max(0.0, relevance)), 4),
        hallucination_risk=round(risk, 4),
        flagged=risk > RISK_FLAG_THRESHOLD,
    )


@dataclass
class EmbeddedPassages:
    """The answer's passages embedded once, so each claim costs one query embedding."""

    embeddings: Embeddings
    vectors: np.ndarray

    @classmethod
    async def of(
        cls, embeddings: Embeddings, chunks: Sequence[tuple[int, str]], max_chars: int
    ) -> "EmbeddedPassages | None":
        texts = [text for _, text in windows(chunks, max_chars)]
        if not texts:
            return None
        vectors = await asyncio.to_thread(embeddings.embed_documents, texts)
        return cls(embeddings, np.asarray(vectors, dtype=np.float32))

    async def best_similarity(self, claim: str) -> float:
        query = np.asarray(await asyncio.to_thread(self.embeddings.embed_query, claim), dtype=np.float32)
        return float((self.vectors @ query).max())


@dataclass
class ClaimJudge:
    """What every claim of one answer is judged with: the model, the answer's chunks and the gates."""

    llm: BaseChatModel
    chunks: Sequence[tuple[int, str]]
    mode: StructuredMode
    usage: TokenUsage | None
    config: JudgeConfig
    embedded: EmbeddedPassages | None = None
    contrast: ContrastCheck | None = None

    async def accepted_passage(self, claim: str) -> Passage | None:
        """The passage the model says states the claim, once the claim is close enough to reach it;
        None when the claim is unsupported before any contrast check."""
        config = self.config
        passage = best_passage(claim, self.chunks, config.passage_chars)
        if passage is None:
            return None
        if self.embedded is not None and config.min_similarity is not None:
            close_enough = await self.embedded.best_similarity(claim) >= config.min_similarity
        else:
            close_enough = passage.coverage >= config.min_coverage
        if not close_enough:
            return None
        messages = entailment_messages(passage=passage.text, claim=claim)
        reply = await ask_structured(self.llm, Entailment, messages, mode=self.mode, usage=self.usage)
        return passage if reply.verdict == "yes" else None

    async def verdict(self, claim: str) -> ClaimVerdict:
        unsupported = ClaimVerdict(claim=claim, supported=False, chunk_ids=[])
        passage = await self.accepted_passage(claim)
        if passage is None:
            return unsupported
        contrast = self.contrast
        if contrast is not None and await contrast.passes(passage.text, claim, self.usage) is False:
            return unsupported
        return ClaimVerdict(claim=claim, supported=True, chunk_ids=[passage.chunk_id])


async def judge_answer(
    llm: BaseChatModel,
    *,
    question: str,
    answer: str,
    chunks: Sequence[JudgeChunk],
    mode: StructuredMode,
    usage: TokenUsage | None = None,
    config: JudgeConfig = JudgeConfig(),
    embeddings: Embeddings | None = None,
    contrast: ContrastCheck | None = None,
) -> Judgement:
    """With `embeddings` (the project's embedding model) a claim must be close to a passage by cosine
    to reach the model, else by its share of key terms. With `contrast`, a claim the model accepts
    must not score clearly below its own opposite (agents/common/contrast.py). Raises
    core.llm.structured.StructuredOutputError when a reply is malformed twice."""
    claims = [s for s in answer_sentences(answer, config.max_sentences) if not states_no_fact(s)]
    pairs = [(c.id, c.text) for c in chunks]
    embedded = None
    if embeddings is not None and claims:
        embedded = await EmbeddedPassages.of(embeddings, pairs, config.passage_chars)
    judge = ClaimJudge(llm, pairs, mode, usage, config, embedded, contrast)
    verdicts = [await judge.verdict(claim) for claim in claims]
    return score_claims(verdicts, relevance=term_coverage(question, answer) or 0.0)

"""The groundedness judge: the application splits the answer into claims (its sentences) and finds,
for each, the passage of the given chunks that covers it best; the model only answers, claim by
claim, whether that passage states it; the application computes the scores.

Definitions (the model never gives a score it could miscount):
- each sentence of the answer is a claim, except those that state no fact ("I could not find this
  in the material", a question back);
- a claim is supported when the best passage holds at least `min_coverage` of its key terms AND the
  model, shown the claim beside that passage alone, says the passage states it; its chunk id is the
  passage's chunk (never an id the model made up: the model names none);
- groundedness = supported claims / claims; an answer with no claims asserts nothing that could be
  wrong, so its groundedness is 1.0 and it is never flagged;
- hallucination_risk = 1 - groundedness (relevance is about answering the question, not about
  inventing, so it does not enter the risk);
- flagged = hallucination_risk > RISK_FLAG_THRESHOLD (0.7): fewer than 30 % of the claims supported;
- relevance = share of the question's key terms the answer takes up (no model call).

Why this shape: a 1.5B model asked to check every sentence against every excerpt at once called
nearly everything supported, or cited nothing (0.45-0.61 accuracy on the SciFact dev cases of
evals/groundedness_judge.py); one claim beside one passage is a comparison it can make."""

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.groundedness.config import JudgeConfig
from agents.groundedness.evidence import best_passage, states_no_fact
from agents.groundedness.prompts import Entailment, answer_sentences, entailment_messages
from agents.question_generator.checks import term_coverage
from core.llm import StructuredMode
from core.structured import TokenUsage, ask_structured

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


async def judge_claim(
    llm: BaseChatModel,
    claim: str,
    chunks: Sequence[JudgeChunk],
    *,
    mode: StructuredMode,
    usage: TokenUsage | None,
    config: JudgeConfig,
) -> ClaimVerdict:
    passage = best_passage(claim, [(c.id, c.text) for c in chunks], config.passage_chars)
    if passage is None or passage.coverage < config.min_coverage:
        return ClaimVerdict(claim=claim, supported=False, chunk_ids=[])
    messages = entailment_messages(passage=passage.text, claim=claim)
    reply = await ask_structured(llm, Entailment, messages, mode=mode, usage=usage)
    supported = reply.verdict == "yes"
    return ClaimVerdict(claim=claim, supported=supported, chunk_ids=[passage.chunk_id] if supported else [])


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
    """Raises core.structured.StructuredOutputError when a reply is malformed twice."""
    claims = [s for s in answer_sentences(answer, config.max_sentences) if not states_no_fact(s)]
    verdicts = [
        await judge_claim(llm, claim, chunks, mode=mode, usage=usage, config=config) for claim in claims
    ]
    return score_claims(verdicts, relevance=term_coverage(question, answer) or 0.0)

"""Pydantic models of the RAG QA API."""

from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from agents.common.citations import Citation
from agents.qa.evidence import Passage
from agents.qa.state import Outcome
from backend.web.records import record_fields
from core.retrieval import Candidate
from core.store.runs.threads import Thread


class QARequest(BaseModel):
    question: str = Field(min_length=1, max_length=2000)
    thread_id: UUID | None = Field(default=None, description="continue this thread; a new one when absent")
    stream: bool = Field(default=False, description="text/event-stream: token events, citations, done")
    debug: bool = Field(default=False, description="include the plan, retrieval scores, timings, tokens")


class RetrievedChunk(BaseModel):
    chunk_id: int
    document_id: str
    document_title: str
    section_path: list[str]
    dense_similarity: float | None
    bm25_score: float
    fused_score: float
    rerank_score: float | None


class QADebug(BaseModel):
    plan: dict[str, Any] | None
    document_filter: str | None
    gate: dict[str, Any] | None
    choice: dict[str, Any] | None = None  # a question with options: the scores of each option
    retrieved: list[RetrievedChunk]
    selected_ids: list[int]
    claimed_ids: list[int]
    invented_ids: list[int]
    support: float | None = None  # share of the answer's own words in the excerpts (agents/qa/support.py)
    withheld: str | None = None  # the model's answer when that share was too low
    timings_ms: dict[str, float]
    tokens: dict[str, dict[str, int]]


class ConfidenceOut(BaseModel):
    """How likely the answer is right (core/confidence), fitted per chat and embedding model."""

    p: float | None = Field(description="probability the answer is right; null where not calibrated")
    label: Literal["high", "medium", "low"]
    signals: dict[str, float] = Field(description="what the probability was computed from")
    reason: str | None = Field(
        default=None, description="why the label is not the probability's (a grade's evidence), if it is not"
    )


class OptionStated(BaseModel):
    letter: str
    chunk_id: int
    sentence: str


class QAResponse(BaseModel):
    answer: str
    has_answer: bool
    citations: list[Citation]
    thread_id: UUID | None  # None when conversations are not kept (QA_THREAD_RETENTION_DAYS=0)
    clarification: str | None = None
    outcome: Outcome
    language: str
    request_id: str
    confidence: ConfidenceOut | None = Field(
        default=None, description="an answer's confidence; null for replies that claim no answer"
    )
    guess: str | None = Field(
        default=None, description="outcome unsure: the model's answer, too unlikely to be claimed"
    )
    passages: list[Passage] = Field(
        default_factory=list, description="medium: the deciding sentence; unsure: what bears on it"
    )
    options_stated: list[OptionStated] = Field(
        default_factory=list, description="unsure, with options: which options the passages state"
    )
    debug: QADebug | None = None


class ThreadOut(record_fields(Thread, exclude={"project_id", "user_id"})):
    pass  # the caller's own thread in this project: those two ids go without saying


class ThreadMessage(BaseModel):
    role: Literal["user", "assistant"]
    content: str
    has_answer: bool | None = None
    outcome: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    confidence: ConfidenceOut | None = None
    guess: str | None = None
    passages: list[Passage] = Field(default_factory=list)


class ThreadDetail(ThreadOut):
    messages: list[ThreadMessage]


def _retrieved(candidate: Candidate) -> RetrievedChunk:
    return RetrievedChunk(
        chunk_id=candidate.chunk_id,
        document_id=str(candidate.row.get("document_id", "")),
        document_title=candidate.row.get("document_title", ""),
        section_path=list(candidate.row.get("section_path", [])),
        dense_similarity=candidate.dense_similarity,
        bm25_score=candidate.lexical_score,
        fused_score=candidate.fused_score,
        rerank_score=candidate.rerank_score,
    )


def to_response(
    result: dict[str, Any],
    *,
    thread_id: UUID | None,
    request_id: str,
    timings_ms: dict[str, float],
    tokens: dict[str, dict[str, int]],
    debug: bool,
) -> QAResponse:
    details = None
    if debug:
        details = QADebug(
            plan=result.get("plan"),
            document_filter=result.get("document_filter"),
            gate=result.get("gate"),
            choice=result.get("choice"),
            retrieved=[_retrieved(c) for c in result.get("retrieved", [])],
            selected_ids=result.get("selected_ids", []),
            claimed_ids=result.get("claimed_ids", []),
            invented_ids=result.get("invented_ids", []),
            support=result.get("support"),
            withheld=result.get("withheld"),
            timings_ms=timings_ms,
            tokens=tokens,
        )
    return QAResponse(
        answer=result.get("answer", ""),
        has_answer=bool(result.get("has_answer")),
        citations=result.get("citations", []),
        thread_id=thread_id,
        clarification=result.get("clarification"),
        outcome=result.get("outcome", "not_found"),
        language=result.get("language", "en"),
        request_id=request_id,
        confidence=result.get("confidence"),
        guess=result.get("guess"),
        passages=result.get("passages", []),
        options_stated=result.get("options_stated", []),
        debug=details,
    )


def thread_message(message: Any) -> ThreadMessage:
    extra = message.additional_kwargs or {}
    return ThreadMessage(
        role="user" if message.type == "human" else "assistant",
        content=message.content if isinstance(message.content, str) else str(message.text),
        has_answer=extra.get("has_answer"),
        outcome=extra.get("outcome"),
        citations=[Citation(**c) for c in extra.get("citations", [])],
        confidence=extra.get("confidence"),
        guess=extra.get("guess"),
        passages=extra.get("passages", []),
    )

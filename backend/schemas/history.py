"""Pydantic models of the audit API: query history (owners) and groundedness evaluations (members: the
aggregates; the items to owners, and to each student their own)."""

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict


class ClaimOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    claim: str
    supported: bool
    chunk_ids: list[int]


class EvaluationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    user_id: UUID | None  # the asker; NULL once they left the project or erased their history
    query_id: UUID | None  # NULL once the query left the history's retention window
    run_id: UUID | None
    question: str
    answer: str
    claims: list[ClaimOut]
    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool
    judge_model: str
    created_at: datetime


class QueryEvaluation(BaseModel):
    """A query's evaluation as listed with it (question and answer are the query's own)."""

    model_config = ConfigDict(from_attributes=True)

    id: UUID
    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool
    claims: list[ClaimOut]
    judge_model: str
    created_at: datetime


class QueryOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    user_id: UUID | None
    agent: str
    question: str
    answer: str | None
    outcome: str | None
    retrieved_chunk_ids: list[int]
    cited_chunk_ids: list[int]
    timings_ms: dict[str, float]
    tokens: dict[str, dict[str, int]]
    request_id: str | None
    run_id: UUID | None
    created_at: datetime
    evaluation: QueryEvaluation | None


class EvaluationSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    count: int
    mean_groundedness: float | None  # None when the window holds no evaluation
    flagged_share: float | None


class EvaluationsOut(BaseModel):
    since: datetime | None
    until: datetime | None
    # "project": every member's evaluations (owners); "own": only the caller's (any other member)
    scope: Literal["project", "own"]
    summary: EvaluationSummary  # over the whole window, not only this page
    evaluations: list[EvaluationOut]

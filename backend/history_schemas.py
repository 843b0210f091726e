"""Pydantic models of the audit API: query history (owners) and groundedness evaluations (members: the
aggregates; the items to owners, and to each student their own)."""

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel


class ClaimOut(BaseModel):
    claim: str
    supported: bool
    chunk_ids: list[int]


class EvaluationOut(BaseModel):
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

    id: UUID
    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool
    claims: list[ClaimOut]
    judge_model: str
    created_at: datetime


class QueryOut(BaseModel):
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

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "QueryOut":
        evaluation = None
        if row["evaluation_id"] is not None:
            evaluation = QueryEvaluation(
                id=row["evaluation_id"],
                groundedness=row["groundedness"],
                relevance=row["relevance"],
                hallucination_risk=row["hallucination_risk"],
                flagged=row["flagged"],
                claims=row["claims"],
                judge_model=row["judge_model"],
                created_at=row["evaluated_at"],
            )
        fields = {name: row[name] for name in cls.model_fields if name != "evaluation"}
        return cls(**fields, evaluation=evaluation)


class EvaluationSummary(BaseModel):
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

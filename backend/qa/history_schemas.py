"""Pydantic models of the audit API: query history (owners) and groundedness evaluations (members: the
aggregates; the items to owners, and to each student their own)."""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from backend.web.records import record_fields
from core.store.runs.evaluations import Evaluation, EvaluationStats
from core.store.runs.history import JudgedEntry, QueryJudgement


class ClaimOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    claim: str
    supported: bool
    chunk_ids: list[int]


# The store's records, less the project id (the route's own); their nullable ids are explained there.
class EvaluationOut(record_fields(Evaluation, exclude={"project_id"}, claims=list[ClaimOut])):
    pass


class QueryEvaluation(record_fields(QueryJudgement, claims=list[ClaimOut])):
    """A query's evaluation as listed with it (question and answer are the query's own)."""


class QueryOut(record_fields(JudgedEntry, exclude={"project_id"}, evaluation=QueryEvaluation | None)):
    pass


class EvaluationSummary(record_fields(EvaluationStats)):
    pass  # over the whole window; the mean and share are None when it holds no evaluation


class EvaluationsOut(BaseModel):
    since: datetime | None
    until: datetime | None
    # "project": every member's evaluations (owners); "own": only the caller's (any other member)
    scope: Literal["project", "own"]
    summary: EvaluationSummary  # over the whole window, not only this page
    evaluations: list[EvaluationOut]

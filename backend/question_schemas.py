"""Request and response models of the question bank and attempts routes."""

import hashlib
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field, field_validator

from agents.common.citations import Citation
from agents.question_generator.state import QuestionType, Rejection

QuestionStatus = Literal["active", "review", "archived"]
Difficulty = Literal["easy", "medium", "hard"]


class GenerateRequest(BaseModel):
    document_id: UUID | None = None
    section: list[Annotated[str, Field(max_length=200)]] = Field(
        default=[], max_length=10, description="a section path prefix, e.g. ['Ownership']"
    )
    n: int = Field(default=5, ge=1, le=10, description="questions wanted (one model call each)")
    types: list[QuestionType] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="assigned round-robin; default: all three types",
    )

    @field_validator("types")
    @classmethod
    def _distinct(cls, types: list[QuestionType] | None) -> list[QuestionType] | None:
        return None if types is None else list(dict.fromkeys(types))


class QuestionOut(BaseModel):
    """`answer`, `distractors` and `explanation` are shown to editors and owners only; everyone sees
    `options` (a multiple-choice question's answer and distractors in a fixed shuffled order)."""

    id: UUID
    project_id: UUID
    document_id: UUID | None
    section_path: list[str]
    type: QuestionType
    question: str
    options: list[str]
    answer: str | None
    distractors: list[str] | None
    explanation: str | None
    difficulty: Difficulty
    confidence: float
    model_confidence: float | None
    support: float | None
    status: QuestionStatus
    source_chunk_ids: list[int]
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any], *, with_answers: bool) -> "QuestionOut":
        options: list[str] = []
        if row["type"] == "multiple_choice":
            options = sorted(
                [row["answer"], *row["distractors"]],
                key=lambda option: hashlib.sha256(f"{row['id']}:{option}".encode()).hexdigest(),
            )
        hidden = {} if with_answers else {"answer": None, "distractors": None, "explanation": None}
        return cls(**{**row, "options": options, **hidden})


class RejectedOut(BaseModel):
    reason: str
    detail: str
    type: QuestionType
    question: str | None
    duplicate_of: UUID | None
    similarity: float | None

    @classmethod
    def from_rejection(cls, rejection: Rejection) -> "RejectedOut":
        return cls(**rejection.__dict__)


class GenerateResponse(BaseModel):
    questions: list[QuestionOut]
    active: int
    review: int
    rejected: list[RejectedOut]
    timings_ms: dict[str, float]
    usage: dict[str, dict[str, int]]


class StatusUpdate(BaseModel):
    status: QuestionStatus


class AttemptCreate(BaseModel):
    answer: str = Field(min_length=1, max_length=5000)


class AttemptOut(BaseModel):
    """`reference_answer` and `explanation` are null until the question is done for its attempter (an
    attempt was correct, or none are left under the project's limit); editors and owners always see them."""

    id: UUID
    question_id: UUID
    user_id: UUID
    answer: str
    score: float
    verdict: Literal["correct", "partially_correct", "incorrect"]
    feedback: str
    missing_points: list[str]
    citations: list[Citation]
    graded_by: Literal["model", "choice"]
    created_at: datetime
    reference_answer: str | None = None
    explanation: str | None = None


class AttemptResult(AttemptOut):
    """The grade, with the reference answer once the question is done for the student (see AttemptOut)."""

    id: UUID | None  # type: ignore[assignment]  # None: not stored (ATTEMPT_RETENTION_DAYS=0)
    attempts_left: int | None  # under the project's limit; None: unlimited (or attempts are not stored)
    timings_ms: dict[str, float]
    usage: dict[str, dict[str, int]]  # tokens per model; empty when graded without the model

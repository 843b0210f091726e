"""Request and response models of the question bank and attempts routes."""

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agents.common.citations import Citation
from agents.question_generator.state import QuestionType, Rejection
from backend.qa.schemas import ConfidenceOut
from core.store.study.questions import Question

QuestionStatus = Literal["active", "review", "archived"]
ReviewState = Literal["pending", "approved", "rejected"]
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
        description="assigned round-robin; default: the three question types and flashcard",
    )

    @field_validator("types")
    @classmethod
    def _distinct(cls, types: list[QuestionType] | None) -> list[QuestionType] | None:
        return None if types is None else list(dict.fromkeys(types))


class QuestionOut(BaseModel):
    """`answer`, `distractors` and `explanation` are shown to editors and owners only, except that a
    flashcard's back (`answer`, and its `explanation`) is part of the card: everyone studying it sees
    it. Everyone sees `options` (a multiple-choice question's answer and distractors in a fixed
    shuffled order). `review_state` is the teacher's decision, `flag` "source_changed" marks an item
    whose source text changed on reindex (both in DATA_MODEL.md, "Study items")."""

    model_config = ConfigDict(from_attributes=True)

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
    review_state: ReviewState
    flag: Literal["source_changed"] | None
    reviewed_at: datetime | None
    created_by_me: bool
    source_chunk_ids: list[int]
    created_at: datetime

    @classmethod
    def from_question(cls, question: Question, *, with_answers: bool) -> "QuestionOut":
        """The item as its reader may see it (`with_answers`: editors and owners)."""
        out = cls.model_validate(question)
        if with_answers:
            return out
        hidden: dict[str, None] = {"distractors": None}
        if question.type != "flashcard":
            hidden |= {"answer": None, "explanation": None}
        return out.model_copy(update=hidden)


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


class QuestionUpdate(BaseModel):
    """PATCH: a teacher's edit of the item's text, and/or its status (`archived` takes it out of the
    bank; `active`/`review` put it back; students study it once it is approved: POST .../review)."""

    status: QuestionStatus | None = None
    question: str | None = Field(default=None, min_length=1, max_length=2000)
    answer: str | None = Field(default=None, min_length=1, max_length=2000)
    distractors: list[Annotated[str, Field(min_length=1, max_length=500)]] | None = Field(
        default=None, min_length=3, max_length=3, description="multiple choice only: 3 wrong options"
    )
    explanation: str | None = Field(default=None, max_length=2000)
    difficulty: Difficulty | None = None

    @field_validator("question", "answer")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return None if value is None else value.strip()


class ReviewRequest(BaseModel):
    action: Literal["approve", "reject"]
    note: str | None = Field(default=None, max_length=1000)


class AttemptCreate(BaseModel):
    answer: str = Field(min_length=1, max_length=5000)


Verdict = Literal["correct", "partially_correct", "incorrect"]
AttemptStatus = Literal["settled", "provisional", "confirmed", "corrected"]


class AttemptOut(BaseModel):
    """`reference_answer` and `explanation` are null until the question is done for its attempter (an
    attempt was correct, or none are left under the project's limit); editors and owners always see them.
    A `provisional` grade (the model's, labelled low by its `confidence`) waits for the teacher: it
    counts against the limit, but not as correct, until an owner confirms or corrects it."""

    model_config = ConfigDict(from_attributes=True)

    id: UUID
    question_id: UUID
    user_id: UUID
    answer: str
    score: float
    verdict: Verdict
    feedback: str
    missing_points: list[str]
    citations: list[Citation]
    graded_by: Literal["model", "choice"]
    created_at: datetime
    status: AttemptStatus = Field(
        description="settled; provisional (waits for the teacher); confirmed or corrected by an owner"
    )
    confidence: ConfidenceOut | None = Field(
        default=None, description="a model grade's confidence; null for an exact or a forfeited one"
    )
    reference_answer: str | None = None
    explanation: str | None = None


class AttemptResult(AttemptOut):
    """The grade, with the reference answer once the question is done for the student (see AttemptOut)."""

    id: UUID | None  # type: ignore[assignment]  # None: not stored (ATTEMPT_RETENTION_DAYS=0)
    attempts_left: int | None  # under the project's limit; None: unlimited (or attempts are not stored)
    timings_ms: dict[str, float]
    usage: dict[str, dict[str, int]]  # tokens per model; empty when graded without the model


class ProvisionalAttemptOut(AttemptOut):
    """An attempt in the teacher's review queue: its question, reference answer and student, and the
    grader's own grade."""

    question: str
    student_email: str
    model_score: float | None
    model_verdict: Verdict | None


class AttemptReview(BaseModel):
    """An owner's review of a provisional grade: the grader's verdict (and score, or none) confirms it;
    another corrects it (with no score: 1, 0.5 or 0 by the verdict)."""

    verdict: Verdict
    score: float | None = Field(default=None, ge=0, le=1)


class ReviewedAttemptOut(AttemptOut):
    model_score: float | None
    model_verdict: Verdict | None
    reviewed_by: UUID
    reviewed_at: datetime

"""Request and response models of the study loop: queue, reviews, settings, mastery."""

from datetime import date, datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from backend.questions.schemas import QuestionOut

CardState = Literal["new", "learning", "review", "relearning"]


class CardOut(BaseModel):
    """The caller's FSRS memory state for one item (fsrs 6.x); `retrievability` is the predicted
    probability of recall now."""

    state: CardState
    due: datetime | None
    stability: float | None
    difficulty: float | None
    retrievability: float | None
    reps: int
    lapses: int
    last_review: datetime | None


class QueueItem(BaseModel):
    question: QuestionOut  # the student view: no answer, except a flashcard's back
    card: CardOut
    is_new: bool


class ExamOut(BaseModel):
    date: date
    source: Literal["student", "project"]
    predicted_retention: float = Field(description="mean predicted recall at the exam of the items studied")


class QueueOut(BaseModel):
    items: list[QueueItem]
    due_count: int
    new_count: int
    new_budget_left: int
    exam: ExamOut | None


class ReviewCreate(BaseModel):
    question_id: UUID
    rating: Literal[1, 2, 3, 4] = Field(description="1 Again, 2 Hard, 3 Good, 4 Easy")


class ReviewOut(BaseModel):
    card: CardOut
    next_due: datetime
    review_id: UUID


class StudySettingsOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    exam_date: date | None
    project_exam_date: date | None
    new_per_day: int
    desired_retention: float


class StudySettingsUpdate(BaseModel):
    """Only the fields sent change; an explicit null exam_date falls back to the project's."""

    exam_date: date | None = None
    new_per_day: int | None = Field(default=None, ge=0, le=1000)
    desired_retention: float | None = Field(default=None, ge=0.7, le=0.99)


class NextItem(BaseModel):
    question_id: UUID
    question: str
    type: str


class TopicMastery(BaseModel):
    topic: list[str]
    mastery: float
    items: int
    studied: int
    attempts: int
    next_items: list[NextItem]


class MasteryOut(BaseModel):
    topics: list[TopicMastery]


class FailedItem(BaseModel):
    question_id: UUID
    question: str
    failures: int
    attempts: int


class ClassTopic(BaseModel):
    topic: list[str]
    students_studied: int
    mean_mastery: float
    histogram: list[int] = Field(min_length=5, max_length=5)
    most_failed: list[FailedItem]


class ClassMasteryOut(BaseModel):
    students: int
    topics: list[ClassTopic]

"""Question Generator state: a narrow input, the working state, and what a run gives back."""

from dataclasses import dataclass, field
from typing import Literal
from uuid import UUID

from agents.question_generator.config import GeneratorConfig
from core.retrieval import Candidate
from core.store.study.questions import NewQuestion, Question

QuestionType = Literal["multiple_choice", "short_answer", "application", "flashcard"]
# The default mix: the three question types and flashcards (front = question, back = answer).
QUESTION_TYPES: tuple[QuestionType, ...] = ("multiple_choice", "short_answer", "application", "flashcard")
RejectReason = Literal[
    "invalid_output", "empty_field", "bad_distractors", "bad_flashcard", "no_valid_source", "duplicate"
]


@dataclass(frozen=True)
class Rejection:
    """A question the model wrote that did not enter the bank, and why."""

    reason: RejectReason
    detail: str
    type: QuestionType
    question: str | None = None
    duplicate_of: UUID | None = None  # an existing question; None for a duplicate within this run
    similarity: float | None = None


@dataclass(frozen=True)
class Pending:
    """One model reply waiting to be checked, with the sources it was written from."""

    type: QuestionType
    sources: list[Candidate]
    reply: dict[str, object] | None  # None: the model gave no valid object
    error: str = ""


@dataclass(kw_only=True)
class InputState:
    n: int = 5
    document_id: UUID | None = None
    section: tuple[str, ...] = ()  # a prefix of section_path
    types: tuple[QuestionType, ...] = QUESTION_TYPES  # assigned round-robin to the n questions
    topic: str | None = None  # retrieval query: the section or document title; None uses the default
    config: GeneratorConfig = field(default_factory=GeneratorConfig)


@dataclass(kw_only=True)
class OutputState:
    saved: list[Question] = field(default_factory=list)  # stored, active or review
    rejected: list[Rejection] = field(default_factory=list)
    reason: Literal["no_sources"] | None = None  # set when nothing could be generated at all


@dataclass(kw_only=True)
class State(InputState, OutputState):
    groups: list[list[Candidate]] = field(default_factory=list)  # the sources of each model call, in order
    calls: int = 0
    pending: Pending | None = None
    accepted: list[NewQuestion] = field(default_factory=list)  # checked, not yet stored

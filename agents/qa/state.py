"""RAG QA state: a narrow input, the internal state nodes update, and the output callers read."""

from typing import Any, Literal, TypedDict

from pydantic import BaseModel, Field

from agents.common.citations import Citation
from core.retrieval import Candidate

# not_found: the gate found no support; declined: the model said the excerpts lack the answer;
# unsupported: the model answered but cited none of the excerpts it was shown, or its answer uses words
# they do not hold (agents/qa/support.py).
# unsure: the model answered, but its confidence (agents/qa/confidence.py) is low: no answer is claimed.
Outcome = Literal["answered", "not_found", "declined", "unsupported", "unsure", "clarification", "study_plan"]


class QueryPlan(BaseModel):
    """The planner's structured output; small and flat for a 1.5B model."""

    question: str = Field(default="", description="the last question rewritten to stand alone")
    terms: list[str] = Field(default_factory=list, description="up to 5 exact identifiers, code or names")
    document: str = Field(default="", description="a document title the user named, else empty")
    ambiguous: bool = Field(default=False, description="true only if it has clearly different readings")
    clarification: str = Field(default="", description="when ambiguous: one short question back")


class ThreadPlan(QueryPlan):
    """In a thread the rewrite is the point: a grammar that forbids an empty one gets one."""

    question: str = Field(min_length=8, description="the last question rewritten to stand alone")


class ModelAnswer(BaseModel):
    """The answer model's structured output."""

    # has_answer first: a streamed answer knows before its first word whether to show it.
    has_answer: bool = Field(description="true if the excerpts contain the answer")
    answer: str = Field(description="the answer, from the excerpts only")
    used_chunk_ids: list[int] = Field(default_factory=list, description="ids of the excerpts used")


class Turn(TypedDict):
    role: Literal["user", "assistant"]
    text: str


class DocumentRef(TypedDict):
    id: str
    title: str
    filename: str


class QAInput(TypedDict, total=False):
    question: str  # required
    history: list[Turn]  # earlier turns of the thread, oldest first
    documents: list[DocumentRef]  # the project's documents, to resolve a title the user named
    stream: bool  # send the answer's text to the stream writer as it is generated


class QAOutput(TypedDict, total=False):
    answer: str
    has_answer: bool
    citations: list[Citation]
    clarification: str | None
    outcome: Outcome
    language: str
    plan: dict[str, Any]
    document_filter: str | None
    retrieved: list[Candidate]
    selected_ids: list[int]
    claimed_ids: list[int]
    invented_ids: list[int]
    support: float | None  # share of the answer's own words in the excerpts shown
    withheld: str  # the model's answer when the support check withheld it
    gate: dict[str, Any]
    choice: dict[str, Any]  # a question with options: the letter chosen and each option's probability
    confidence: dict[str, Any]  # an answered reply's {p, label, signals} (core/confidence)
    guess: str  # the model's answer when its confidence was too low to claim it
    passages: list[dict[str, Any]]  # what to read with a medium or low reply, the key sentence highlighted
    options_stated: list[dict[str, Any]]  # a low reply to options: which options the passages state


class QAState(QAInput, QAOutput, total=False):
    """Everything a node may read; each node returns only the keys it changes."""

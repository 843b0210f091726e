"""Question Evaluator state: the question and the student's answer in, a grade out."""

from dataclasses import dataclass, field
from typing import Any, Literal

from agents.common.citations import Citation
from agents.question_evaluator.config import EvaluatorConfig
from core.retrieval import Candidate

Verdict = Literal["correct", "partially_correct", "incorrect"]


@dataclass(kw_only=True)
class InputState:
    question: dict[str, Any]  # a stored question row (core/store/study/questions.py)
    answer: str
    config: EvaluatorConfig = field(default_factory=EvaluatorConfig)


@dataclass(kw_only=True)
class OutputState:
    score: float = 0.0
    verdict: Verdict = "incorrect"
    feedback: str = ""
    missing_points: list[str] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    invented_ids: list[int] = field(default_factory=list)  # chunk ids the model cited but was not given
    reference_overlap: float | None = None  # share of the reference's key terms in the answer (model path)
    graded_by: Literal["model", "choice"] = "model"  # "choice": a multiple-choice option, matched exactly
    # Sentences of the answer addressed to the grader: ignored (agents/common/injection.py).
    screened: list[str] = field(default_factory=list)
    # Sentences and clauses of the answer that share no term with the question, the reference or the
    # excerpts: not graded (agents/question_evaluator/topical.py).
    off_subject: list[str] = field(default_factory=list)
    # The contrast check on a credited answer: P(yes | answer) - P(yes | its opposite) beside the
    # reference, and the score before the check capped it; None where it did not run or abstained.
    contrast: float | None = None
    score_before_contrast: float | None = None
    # The grade's calibrated confidence {p, label, signals} (core/confidence); None for an exact
    # multiple-choice grade and for an answer forfeited or off the subject without a model call.
    confidence: dict[str, Any] | None = None
    # Sentences addressed to a reader that a second grading left out, when it gave the lower grade.
    addressed: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class State(InputState, OutputState):
    retrieved: list[Candidate] = field(default_factory=list)

"""Grades every answer of the chosen questions with the real Question Evaluator graph, one at a time
(the embedded model serves one request at a time, so the latency is per grading)."""

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from agents.common.context import AgentContext
from agents.question_evaluator.config import EvaluatorConfig
from agents.question_evaluator.graph import graph
from core.confidence import Calibration, uncalibrated
from core.llm.chat import StructuredMode
from core.llm.structured import StructuredOutputError
from core.observability import timing
from evals.grading.dataset import GRADE, Answer, Question

Log = Callable[[str], None]


def _print(line: str) -> None:
    print(line, flush=True)  # a long run's progress shows in a redirected log as it goes


@dataclass(frozen=True)
class Graded:
    question_id: str
    language: str
    kind: str
    label: str
    verdict: str | None  # None: the evaluator failed (malformed reply twice, timeout)
    score: float | None
    screened: int  # sentences the injection screen took out of the answer
    latency_s: float
    reference_overlap: float | None = None  # share of the reference's key terms in the answer
    feedback: str = ""
    off_subject: int = 0  # sentences and clauses left ungraded as not about the question
    contrast: float | None = None  # the contrast check's difference, where it ran
    score_before_contrast: float | None = None
    # The grade's {p, label, signals} (core/confidence); None where a rule decided it without the model.
    confidence: dict[str, Any] | None = None
    addressed: int = 0  # sentences addressed to a reader that a second grading left out (lower grade)

    @property
    def gold(self) -> int:
        return GRADE[self.label]

    @property
    def predicted(self) -> int:
        """A failed grading counts as "incorrect" (0): what a student would not be credited with."""
        return GRADE[self.verdict] if self.verdict else 0


def context(
    llm: BaseChatModel, mode: StructuredMode, language: str, confidence: Calibration | None = None
) -> AgentContext:
    # A question without a document: the grader reads neither the retriever nor the database.
    return AgentContext(
        project_id=uuid.uuid4(),
        retriever=None,  # type: ignore[arg-type]
        llm=llm,
        structured_mode=mode,
        language=language,
        confidence=confidence or uncalibrated("", ""),
    )


async def grade_one(
    question: Question,
    answer: Answer,
    llm: BaseChatModel,
    mode: StructuredMode,
    config: EvaluatorConfig,
    confidence: Calibration | None = None,
) -> Graded:
    started = timing.mark()
    verdict = score = overlap = None
    screened, off_subject, feedback, contrast, before = 0, 0, "", None, None
    out: dict[str, Any] = {}
    try:
        out = await graph.ainvoke(
            {"question": question.as_row(), "answer": answer.text, "config": config},
            context=context(llm, mode, question.language, confidence),
        )
        verdict, score, screened = out["verdict"], out["score"], len(out.get("screened", []))
        overlap, feedback = out.get("reference_overlap"), out.get("feedback", "")
        off_subject = len(out.get("off_subject", []))
        contrast, before = out.get("contrast"), out.get("score_before_contrast")
    except (StructuredOutputError, TimeoutError) as error:
        print(f"  {question.id}/{answer.kind}: evaluator failed: {str(error)[:120]}", flush=True)
    return Graded(
        question.id,
        question.language,
        answer.kind,
        answer.label,
        verdict,
        score,
        screened,
        timing.elapsed_s(started),
        overlap,
        feedback,
        off_subject,
        contrast,
        before,
        out.get("confidence"),
        len(out.get("addressed", [])),
    )


async def grade_all(
    questions: Sequence[Question],
    llm: BaseChatModel,
    mode: StructuredMode,
    *,
    kinds: set[str] | None = None,
    config: EvaluatorConfig | None = None,
    confidence: Calibration | None = None,
    log: Log = _print,
) -> list[Graded]:
    config = config or EvaluatorConfig()
    results = []
    for question in questions:
        for answer in question.all_answers:
            if kinds is not None and answer.kind not in kinds:
                continue
            graded = await grade_one(question, answer, llm, mode, config, confidence)
            results.append(graded)
            mark = "ok " if graded.predicted == graded.gold else "ERR"
            if answer.kind == "injected" and graded.predicted > graded.gold:
                mark = "INJ"  # the injection raised the grade
            log(
                f"{mark} {question.id} {answer.kind:17s} label={answer.label:17s}"
                f" verdict={graded.verdict} score={graded.score} overlap={graded.reference_overlap}"
                f" screened={graded.screened} off_subject={graded.off_subject} contrast={graded.contrast}"
                f" before={graded.score_before_contrast} label={(graded.confidence or {}).get('label')}"
                f" {graded.latency_s:5.1f}s"
            )
    return results

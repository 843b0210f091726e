"""Question Evaluator knobs: how much of the question's document the grader sees, and verdict bands."""

from dataclasses import dataclass


@dataclass(frozen=True)
class EvaluatorConfig:
    top_k: int = 5  # chunks of the question's own document (the evaluator profile allows at most 5)
    chunk_chars: int = 400  # per chunk in the prompt: five of them cost ~5 s of prefill on the 1.5B model
    # The verdict follows the (clamped) score, so the two can never disagree.
    correct_from: float = 0.75
    # Checked on the grading set's dev split: 0.3 let a "correct" on a wrong or off-topic answer with
    # a few of the reference's terms through as partial more often than it saved short partial answers.
    partial_from: float = 0.35
    # A small grader tends to accept any true statement from the excerpts as "correct" ("matches the
    # reference exactly"). The application scales its score by the answer's agreement with the
    # reference: the share of the reference's key terms in the answer, where `overlap_full` of them
    # counts as full agreement and none leaves `overlap_floor` of the model's score.
    overlap_floor: float = 0.25
    overlap_full: float = 0.5
    # A partial score (from partial_from) on an answer with at least this agreement (0..1, of
    # overlap_full) counts as correct: on the dev split the 1.5B model called complete paraphrases
    # "partially correct", naming as missing points the answer makes.
    partial_is_correct_from: float = 0.8
    # The most an answer carrying text addressed to the grader can score (agents/common/injection.py).
    # 0: it forfeits the grade without a model call; the model cannot be trusted with the rest of it.
    hostile_max_score: float = 0.0
    # The contrast check (agents/common/contrast.py) on an answer the grader credits: with the
    # reference answer as the passage, an answer whose own opposite is likelier by more than this
    # margin contradicts the reference and scores at most `contradicted_max_score` (incorrect). None:
    # no check (the default). Measured with the judge's margin 0.05: dev split kappa 0.615 -> 0.651,
    # but test split 0.744 -> 0.694 (6 credited wrong answers caught, 5 right ones wrongly rejected;
    # evals/reports/grading-dev-contrast.md, grading-test-contrast.md), so it stays off. Needs
    # log-probabilities; abstains without them.
    contrast_margin: float | None = None
    contradicted_max_score: float = 0.2

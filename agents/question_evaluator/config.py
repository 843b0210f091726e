"""Question Evaluator knobs: how much of the question's document the grader sees, and verdict bands."""

from dataclasses import dataclass


@dataclass(frozen=True)
class EvaluatorConfig:
    top_k: int = 5  # chunks of the question's own document (the evaluator profile allows at most 5)
    chunk_chars: int = 400  # per chunk in the prompt: five of them cost ~5 s of prefill on the 1.5B model
    # The verdict follows the (clamped) score, so the two can never disagree.
    correct_from: float = 0.75
    partial_from: float = 0.35
    # A small grader tends to accept any true statement from the excerpts as "correct" ("matches the
    # reference exactly"). The application scales its score by the answer's agreement with the
    # reference: the share of the reference's key terms in the answer, where `overlap_full` of them
    # counts as full agreement and none leaves `overlap_floor` of the model's score.
    overlap_floor: float = 0.25
    overlap_full: float = 0.5

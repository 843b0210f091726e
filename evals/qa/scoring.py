"""Scoring one QA reply against its case: correctness, citation precision, refusal.

Correct means: for multiple choice, the option the answer names (a letter such as "B)" or "option
B"), else the one option whose words it shares most (a small model often restates an option in its
own words); for short and extractive answers, a gold answer appears in the reply (normalised) or the
token F1 with it reaches 0.5, SQuAD's usual lenient bar; for an absent case, the reply says it was
not found (has_answer false)."""

from collections.abc import Sequence
from dataclasses import dataclass

from core.text.answers import F1_BAR, chosen_option, contains, right_answer, token_f1
from evals.qa.datasets import QACase

__all__ = ["F1_BAR", "CaseScore", "chosen_option", "contains", "score_case", "token_f1"]


@dataclass(frozen=True)
class CaseScore:
    correct: bool
    f1: float  # best token F1 against a gold answer (0 for multiple choice and absent cases)
    cited: int
    cited_on_target: int


def score_case(
    case: QACase, *, answer: str, has_answer: bool, cited_files: Sequence[str], cited_texts: Sequence[str]
) -> CaseScore:
    on_target = sum(
        1 for name, text in zip(cited_files, cited_texts, strict=True) if _on_target(case, name, text)
    )
    if case.kind == "absent":
        return CaseScore(not has_answer, 0.0, len(cited_files), on_target)
    if not has_answer:
        return CaseScore(False, 0.0, len(cited_files), on_target)
    if case.kind == "multiple_choice":
        picked = chosen_option(answer, case.options)
        correct = picked is not None and case.options[picked] == case.answers[0]
        return CaseScore(correct, 0.0, len(cited_files), on_target)
    f1 = max((token_f1(answer, gold) for gold in case.answers), default=0.0)
    return CaseScore(right_answer(answer, case.answers), f1, len(cited_files), on_target)


def _on_target(case: QACase, filename: str, text: str) -> bool:
    return filename in case.evidence_files or any(contains(text, gold) for gold in case.evidence_texts)

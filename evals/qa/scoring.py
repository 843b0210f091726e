"""Scoring one QA reply against its case: correctness, citation precision, refusal.

Correct means: for multiple choice, the option the answer names (a letter such as "B)" or "option
B"), else the one option whose words it shares most (a small model often restates an option in its
own words); for short and extractive answers, a gold answer appears in the reply (normalised) or the
token F1 with it reaches 0.5, SQuAD's usual lenient bar; for an absent case, the reply says it was
not found (has_answer false)."""

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.text.words import FUNCTION_WORDS
from evals.qa.datasets import LETTERS, QACase

F1_BAR = 0.5
# Tried in order; the letter itself must be a capital, so "the answer is a reference" picks nothing.
_LETTER_PATTERNS = tuple(
    re.compile(pattern, re.MULTILINE)
    for pattern in (
        r"^\W*\(?([A-H])[).:](?!\w)",  # a line starting "B)", "(B)", "**B.**"
        r"(?i:option|answer|alternativa|letra|resposta)(?:\s+(?i:is|é))?\s*[:\-]?\s*\(?([A-H])\b",
        r"\(([A-H])\)",
        r"\b([A-H])\)",
    )
)


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


# Function words share nothing about the answer; compared as `normalize` writes them ("não" -> "nao").
_STOP = frozenset(normalize(word) for lang in ("en", "pt") for word in FUNCTION_WORDS[lang])


def tokens(text: str) -> list[str]:
    return [t for t in normalize(text).split() if t not in _STOP]


def token_f1(prediction: str, gold: str) -> float:
    predicted, wanted = tokens(prediction), tokens(gold)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if not predicted or not wanted or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def contains(answer: str, gold: str) -> bool:
    wanted = normalize(gold)
    return bool(wanted) and f" {wanted} " in f" {normalize(answer)} "


def chosen_option(answer: str, options: Sequence[str]) -> int | None:
    """The index of the option the answer picks, or None if it names none."""
    letters = LETTERS[: len(options)]
    for pattern in _LETTER_PATTERNS:
        for match in pattern.finditer(answer):
            if match.group(1) in letters:
                return letters.index(match.group(1))
    # No letter: the option the reply's words agree with most, if one does more than the others.
    overlaps = [token_f1(answer, option) for option in options]
    best = max(overlaps, default=0.0)
    return overlaps.index(best) if best > 0 and overlaps.count(best) == 1 else None


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
    correct = any(contains(answer, gold) for gold in case.answers) or f1 >= F1_BAR
    return CaseScore(correct, f1, len(cited_files), on_target)


def _on_target(case: QACase, filename: str, text: str) -> bool:
    return filename in case.evidence_files or any(contains(text, gold) for gold in case.evidence_texts)

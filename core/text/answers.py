"""Whether a reply answers a question as its key does: the option it names, or a gold answer it holds
(normalised) or shares words with (token F1, SQuAD's usual lenient bar). Used by the QA evals and by
`studyai calibrate`, which labels a project's own questions with it to fit the answers' confidence."""

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from core.text.words import FUNCTION_WORDS

LETTERS = "ABCDEFGH"

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


def right_answer(answer: str, golds: Sequence[str]) -> bool:
    """A free answer is right: it holds a gold answer, or shares enough words with one."""
    return (
        any(contains(answer, gold) for gold in golds)
        or max((token_f1(answer, gold) for gold in golds), default=0.0) >= F1_BAR
    )

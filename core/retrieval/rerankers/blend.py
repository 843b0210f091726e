"""The offline default: rescoring every fused candidate by a blend of its two real scores.

RRF keeps only ranks. Here each candidate of the fused set gets both its e5 cosine similarity
and its BM25 score (0 when it holds no query term), each min-max normalised over the set, blended
with weight `dense_weight`. It is honest about what it is: no cross-encoder ships inside a
package, so this uses only the two signals we already have, at almost no cost."""

from core.retrieval.types import Candidate


def _normalised(values: list[float]) -> list[float]:
    low, high = min(values), max(values)
    if high - low < 1e-12:
        return [0.0 for _ in values]
    return [(value - low) / (high - low) for value in values]


class ScoreBlend:
    name = "blend"

    def __init__(self, dense_weight: float = 0.5) -> None:
        self.dense_weight = dense_weight

    async def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        dense = _normalised([c.dense_similarity or 0.0 for c in candidates])
        lexical = _normalised([c.lexical_score for c in candidates])
        weight = self.dense_weight
        return [weight * d + (1 - weight) * s for d, s in zip(dense, lexical, strict=True)]

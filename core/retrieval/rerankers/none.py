"""No reranking: the fused (RRF) order is the answer."""

from core.retrieval.types import Candidate


class FusedOrder:
    name = "none"

    async def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        return [candidate.fused_score for candidate in candidates]

"""Reciprocal Rank Fusion: score = sum over lists of 1 / (k + rank)."""

from core.retrieval.types import Candidate


def reciprocal_rank_fusion(dense: list[int], lexical: list[int], *, k: int = 60) -> list[Candidate]:
    """Fuses two ranked lists of chunk ids; ties broken by best single rank, then id, so the order
    is deterministic."""
    candidates: dict[int, Candidate] = {}
    for rank, chunk_id in enumerate(dense, start=1):
        candidate = candidates.setdefault(chunk_id, Candidate(chunk_id))
        candidate.dense_rank = rank
        candidate.fused_score += 1.0 / (k + rank)
    for rank, chunk_id in enumerate(lexical, start=1):
        candidate = candidates.setdefault(chunk_id, Candidate(chunk_id))
        candidate.lexical_rank = rank
        candidate.fused_score += 1.0 / (k + rank)

    def best_rank(c: Candidate) -> int:
        return min(r for r in (c.dense_rank, c.lexical_rank) if r is not None)

    return sorted(candidates.values(), key=lambda c: (-c.fused_score, best_rank(c), c.chunk_id))

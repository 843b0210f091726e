"""One interface for every reranker: score the hydrated candidates for a query."""

from typing import Protocol

from core.retrieval.types import Candidate


class Reranker(Protocol):
    name: str

    async def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """One score per candidate, higher is better, in the candidates' order."""
        ...


def passage_text(candidate: Candidate) -> str:
    """What a text reranker reads: the same header + text the embedding saw."""
    header = candidate.context_header
    return f"{header}\n\n{candidate.text}" if header else candidate.text

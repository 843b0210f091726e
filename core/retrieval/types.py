"""What the retriever takes and gives back."""

from dataclasses import dataclass, field
from typing import Any, Literal
from uuid import UUID

from core.text.filetypes import SourceType

Kind = Literal["uploaded", "generated"]


@dataclass(frozen=True)
class Filters:
    """Optional narrowing; project_id is never a filter, it is always applied by the application."""

    document_ids: tuple[UUID, ...] = ()
    section: tuple[str, ...] = ()  # a prefix of section_path
    source_type: SourceType | None = None
    kind: Kind | None = None

    @property
    def touches_documents(self) -> bool:
        return self.source_type is not None or self.kind is not None


@dataclass
class Candidate:
    """A chunk on its way through the pipeline: how it got here, then what it is."""

    chunk_id: int
    dense_rank: int | None = None  # 1-based rank in the dense list
    lexical_rank: int | None = None  # 1-based rank in the lexical (BM25) list
    dense_similarity: float | None = None  # cosine similarity to the query
    lexical_score: float = 0.0  # BM25; 0 when no query term occurs in the chunk
    fused_score: float = 0.0  # reciprocal rank fusion
    rerank_score: float | None = None
    row: dict[str, Any] = field(default_factory=dict)  # chunk + document columns, once hydrated

    @property
    def text(self) -> str:
        return self.row.get("text", "")

    @property
    def context_header(self) -> str:
        return self.row.get("context_header", "")


@dataclass
class StageTimings:
    embed_ms: float = 0.0
    dense_ms: float = 0.0
    lexical_ms: float = 0.0
    fuse_ms: float = 0.0
    hydrate_ms: float = 0.0
    rerank_ms: float = 0.0
    total_ms: float = 0.0


@dataclass
class RetrievalResult:
    query: str
    profile: str
    reranker: str
    results: list[Candidate]
    dense: list[Candidate]
    lexical: list[Candidate]
    fused: list[Candidate]
    reranked: list[Candidate]  # every reranked candidate, best first; results is its top-k
    timings: StageTimings
    dense_scan: str = "exact"  # "exact", "hnsw", or "hnsw+exact" when the approximate scan fell short

"""How documents are cut into chunks and how chunks are found (core/retrieval)."""

from typing import Literal

from pydantic import Field

from core.settings.group import SettingsGroup


class ChunkingSettings(SettingsGroup):
    max_chars: int = Field(default=1200, validation_alias="CHUNK_MAX_CHARS")
    overlap_chars: int = Field(default=150, validation_alias="CHUNK_OVERLAP_CHARS")
    min_chars: int = Field(default=200, validation_alias="CHUNK_MIN_CHARS")


class RetrievalSettings(SettingsGroup):
    """Candidate depth per list, fusion, rerank, index behaviour."""

    candidate_depth: int = Field(default=100, validation_alias="RETRIEVAL_CANDIDATE_DEPTH")
    rrf_k: int = Field(default=60, validation_alias="RETRIEVAL_RRF_K")
    # Fused candidates the reranker sees.
    rerank_depth: int = Field(default=100, validation_alias="RETRIEVAL_RERANK_DEPTH")
    # Chunks the rarer query terms may bring in for BM25 scoring (core/retrieval/lexical.py).
    lexical_budget: int = Field(default=1000, validation_alias="RETRIEVAL_LEXICAL_BUDGET")
    # Projects up to this many chunks are searched exactly.
    exact_below: int = Field(default=10_000, validation_alias="RETRIEVAL_EXACT_BELOW")
    hnsw_ef_search: int = Field(default=100, validation_alias="HNSW_EF_SEARCH")
    hnsw_max_scan_tuples: int = Field(default=8_000, validation_alias="HNSW_MAX_SCAN_TUPLES")
    bm25_k1: float = Field(default=0.9, validation_alias="BM25_K1")
    bm25_b: float = Field(default=0.4, validation_alias="BM25_B")
    reranker: Literal["none", "blend", "cross-encoder", "http"] = Field(
        default="blend", validation_alias="RERANKER"
    )
    blend_dense_weight: float = Field(default=0.5, validation_alias="BLEND_DENSE_WEIGHT")
    # A sentence-transformers CrossEncoder name or local path.
    cross_encoder_model: str | None = Field(default=None, validation_alias="CROSS_ENCODER_MODEL")
    # A text-embeddings-inference style service; POST {url}/rerank.
    rerank_url: str | None = Field(default=None, validation_alias="RERANK_URL")
    rerank_api_key: str | None = Field(default=None, validation_alias="RERANK_API_KEY")

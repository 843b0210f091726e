"""Pydantic models of the search API."""

from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from core.retrieval import Candidate, Filters, RetrievalResult
from core.store.content.refs import Location, location_of
from core.text.filetypes import SourceType

SECTION_SEPARATOR = " > "
# A section path as stored: at most six heading levels of at most 200 characters (workers/chunking).
SectionPart = Annotated[str, Field(max_length=200)]
SectionPath = (
    Annotated[str, Field(max_length=1300)] | Annotated[list[SectionPart], Field(max_length=10)] | None
)


def _section(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    parts = value.split(SECTION_SEPARATOR) if isinstance(value, str) else value
    return tuple(part.strip() for part in parts if part.strip())


class SearchFilters(BaseModel):
    document_id: UUID | Annotated[list[UUID], Field(max_length=50)] | None = None
    section: SectionPath = Field(
        default=None, description="A prefix of the section path, as a list or joined with ' > '."
    )
    source_type: SourceType | None = None
    kind: Literal["uploaded", "generated"] | None = None

    def to_filters(self) -> Filters:
        ids = self.document_id if isinstance(self.document_id, list) else [self.document_id]
        return Filters(
            document_ids=tuple(i for i in ids if i is not None),
            section=_section(self.section),
            source_type=self.source_type,
            kind=self.kind,
        )


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=2000)
    top_k: int | None = Field(default=None, ge=1, le=100)
    profile: Literal["planner", "writer", "qa", "evaluator", "generator", "search"] = "search"
    filters: SearchFilters = Field(default_factory=SearchFilters)
    prefer_section: SectionPath = Field(default=None, description="writer profile: rank it first")
    debug: bool = False

    def preferred_section(self) -> tuple[str, ...]:
        return _section(self.prefer_section)


class Provenance(BaseModel):
    dense_rank: int | None
    lexical_rank: int | None
    dense_similarity: float | None
    bm25_score: float
    fused_score: float
    rerank_score: float | None


class SearchHit(BaseModel):
    rank: int
    chunk_id: int
    document_id: UUID
    document_title: str
    filename: str
    source_type: str
    kind: str
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    location: Location | None  # what page_start/page_end count: "page" (PDF, scan) or "slide" (deck)
    char_start: int
    char_end: int
    context_header: str
    text: str
    provenance: Provenance


class ListedCandidate(BaseModel):
    rank: int
    chunk_id: int
    provenance: Provenance


class SearchDebug(BaseModel):
    dense: list[ListedCandidate]
    lexical: list[ListedCandidate]
    fused: list[ListedCandidate]
    reranked: list[ListedCandidate]
    timings_ms: dict[str, float]


class SearchResponse(BaseModel):
    query: str
    profile: str
    reranker: str
    results: list[SearchHit]
    debug: SearchDebug | None = None


def _provenance(c: Candidate) -> Provenance:
    return Provenance(
        dense_rank=c.dense_rank,
        lexical_rank=c.lexical_rank,
        dense_similarity=c.dense_similarity,
        bm25_score=c.lexical_score,
        fused_score=c.fused_score,
        rerank_score=c.rerank_score,
    )


def _listed(candidates: list[Candidate]) -> list[ListedCandidate]:
    return [
        ListedCandidate(rank=rank, chunk_id=c.chunk_id, provenance=_provenance(c))
        for rank, c in enumerate(candidates, start=1)
    ]


def to_response(result: RetrievalResult, *, debug: bool) -> SearchResponse:
    hits = [
        SearchHit(
            rank=rank,
            chunk_id=c.chunk_id,
            document_id=c.row["document_id"],
            document_title=c.row["document_title"],
            filename=c.row["filename"],
            source_type=c.row["source_type"],
            kind=c.row["kind"],
            section_path=list(c.row["section_path"]),
            page_start=c.row["page_start"],
            page_end=c.row["page_end"],
            location=location_of(c.row["source_type"]),
            char_start=c.row["char_start"],
            char_end=c.row["char_end"],
            context_header=c.row["context_header"],
            text=c.row["text"],
            provenance=_provenance(c),
        )
        for rank, c in enumerate(result.results, start=1)
    ]
    extra = None
    if debug:
        extra = SearchDebug(
            dense=_listed(result.dense),
            lexical=_listed(result.lexical),
            fused=_listed(result.fused),
            reranked=_listed(result.reranked),
            timings_ms=vars(result.timings),
        )
    return SearchResponse(
        query=result.query, profile=result.profile, reranker=result.reranker, results=hits, debug=extra
    )

"""Citations are built by the application from chunks that were actually retrieved."""

from typing import Any

from core.retrieval import Candidate
from core.store.content.refs import ChunkRef, location_of
from core.text.markdown_window import window

EXCERPT_CHARS = 300


class Citation(ChunkRef):
    excerpt: str


def ref_fields(candidate: Candidate) -> dict[str, Any]:
    """The ChunkRef fields of a retrieved chunk, for any model built on ChunkRef."""
    row = candidate.row
    return {
        "chunk_id": candidate.chunk_id,
        "document_id": str(row["document_id"]),
        "document_title": row["document_title"],
        "section_path": list(row["section_path"]),
        "page_start": row["page_start"],
        "page_end": row["page_end"],
        "location": location_of(row.get("source_type")),
        "document_version": row.get("document_version"),
        "char_start": row.get("char_start"),
        "char_end": row.get("char_end"),
    }


def citation_for(candidate: Candidate) -> Citation:
    # The chunk's start as Markdown, its lines kept (shown as the book shows it until the whole loads).
    return Citation(**ref_fields(candidate), excerpt=window(candidate.text.strip(), 0, EXCERPT_CHARS))


def build_citations(claimed_ids: list[int], retrieved: list[Candidate]) -> tuple[list[Citation], list[int]]:
    """Citations for the claimed ids that were retrieved, in claim order without repeats, and the
    ids the model invented (dropped)."""
    by_id = {candidate.chunk_id: candidate for candidate in retrieved}
    citations: list[Citation] = []
    invented: list[int] = []
    seen: set[int] = set()
    for chunk_id in claimed_ids:
        if chunk_id in seen:
            continue
        seen.add(chunk_id)
        if chunk_id in by_id:
            citations.append(citation_for(by_id[chunk_id]))
        else:
            invented.append(chunk_id)
    return citations, invented

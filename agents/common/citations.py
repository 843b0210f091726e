"""Citations are built by the application from chunks that were actually retrieved."""

from pydantic import BaseModel

from core.retrieval import Candidate

EXCERPT_CHARS = 300


class Citation(BaseModel):
    chunk_id: int
    document_id: str
    document_title: str
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    excerpt: str


def citation_for(candidate: Candidate) -> Citation:
    row = candidate.row
    text = " ".join(candidate.text.split())
    return Citation(
        chunk_id=candidate.chunk_id,
        document_id=str(row["document_id"]),
        document_title=row["document_title"],
        section_path=list(row["section_path"]),
        page_start=row["page_start"],
        page_end=row["page_end"],
        excerpt=text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else ""),
    )


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

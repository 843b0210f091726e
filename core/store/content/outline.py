"""The material's structure as its chunks carry it: one row per (document, section path) with that
section's chunk ids in reading order, for the mind map (backend/mindmap). One grouped statement over
the project's chunks, scoped by membership in its SQL: no per-chunk or per-document round trips."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection, in_project, scope
from core.store.sql.rows import fetch_all


@dataclass(frozen=True, slots=True)
class SectionChunks:
    """The live chunks of one document that share one section path (empty: before the first heading)."""

    document_id: UUID
    document_title: str
    source_type: str
    section_path: list[str]
    chunk_ids: list[int]  # in the document's order (ordinal)
    first_ordinal: int
    page_start: int | None
    page_end: int | None


_SELECT = (
    "SELECT d.id AS document_id, d.title AS document_title, d.source_type, c.section_path,"
    " array_agg(c.id ORDER BY c.ordinal) AS chunk_ids, min(c.ordinal) AS first_ordinal,"
    " min(c.page_start) AS page_start, max(c.page_end) AS page_end"
    " FROM chunks c JOIN documents d ON d.project_id = c.project_id AND d.id = c.document_id"
    " WHERE {where}"
    " GROUP BY d.id, d.title, d.source_type, d.created_at, c.section_path"
    " ORDER BY d.created_at, d.id, first_ordinal"
)


async def project_sections(conn: Connection, *, project_id: UUID, user_id: UUID) -> list[SectionChunks]:
    """The sections of the project's uploaded documents, documents oldest first, sections in reading
    order. Generated notes are left out: they restate the material, whose own structure this is."""
    query = _SELECT.format(where=f"{in_project('c')} AND d.kind = 'uploaded'")
    return await fetch_all(conn, class_row(SectionChunks), query, scope(project_id, user_id))


async def document_sections(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> list[SectionChunks]:
    """One document's sections in reading order (any kind: a generated note has headings too)."""
    query = _SELECT.format(where=f"{in_project('c')} AND c.document_id = %(document_id)s")
    return await fetch_all(
        conn, class_row(SectionChunks), query, scope(project_id, user_id, document_id=document_id)
    )

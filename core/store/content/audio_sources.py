"""What an audio overview is made from: the chosen documents (membership-scoped) and their passages.

A study guide (or any note the Content Writer made) is spoken from the passages of the material it
cited, found in its write_note job's result, so every line of the overview rests on the course material
itself; while those chunks are live. Otherwise, and for an uploaded document, its own chunks in order."""

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg.rows import class_row, dict_row, scalar_row

from core.store.sql.access import Connection, member_of, scope
from core.store.sql.rows import fetch_all


@dataclass(frozen=True, slots=True)
class ChosenDocument:
    id: UUID
    title: str
    kind: str  # uploaded or generated
    language: str  # pt, en or auto (not detected)


async def chosen_documents(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_ids: list[UUID]
) -> list[ChosenDocument]:
    """The chosen documents the caller may read, in the order chosen (a missing one is left out)."""
    return await fetch_all(
        conn,
        class_row(ChosenDocument),
        "SELECT d.id, d.title, d.kind, d.language FROM documents d"
        f" WHERE d.project_id = %(project_id)s AND d.id = ANY(%(ids)s) AND {member_of('d.project_id')}"
        " ORDER BY array_position(%(ids)s, d.id)",
        scope(project_id, user_id, ids=document_ids),
    )


# A retrieval Candidate's row (core/retrieval): what agents.common.citations needs for a citation.
_PASSAGE = (
    "SELECT c.id AS chunk_id, c.text, c.context_header, c.document_id, d.title AS document_title,"
    " c.section_path, c.page_start, c.page_end, d.source_type, c.document_version, c.char_start, c.char_end"
    " FROM chunks c JOIN documents d ON d.id = c.document_id AND d.project_id = c.project_id"
    f" WHERE c.project_id = %(project_id)s AND {member_of('c.project_id')}"
)


async def cited_chunk_ids(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> list[int]:
    """The chunks a written note (study guide, FAQ, ...) cites, in the order it cites them."""
    return await fetch_all(
        conn,
        scalar_row,
        "SELECT cited.id::bigint FROM jobs j,"
        " jsonb_array_elements(j.result->'sections') WITH ORDINALITY AS s(section, n),"
        " jsonb_array_elements_text(s.section->'cited_chunk_ids') WITH ORDINALITY AS cited(id, n)"
        " WHERE j.project_id = %(project_id)s AND j.document_id = %(document_id)s"
        f" AND j.kind = 'write_note' AND j.status = 'succeeded' AND {member_of('j.project_id')}"
        " ORDER BY s.n, cited.n",
        scope(project_id, user_id, document_id=document_id),
    )


async def passages(
    conn: Connection, *, project_id: UUID, user_id: UUID, documents: list[ChosenDocument]
) -> list[dict[str, Any]]:
    """The passages to speak from, documents in the order chosen: a written note's cited chunks (where
    still live), else the document's own chunks in order."""
    found: list[dict[str, Any]] = []
    for document in documents:
        rows: list[dict[str, Any]] = []
        if document.kind == "generated":
            ids = await cited_chunk_ids(conn, project_id=project_id, user_id=user_id, document_id=document.id)
            cited = list(dict.fromkeys(ids))
            if cited:
                rows = await fetch_all(
                    conn,
                    dict_row,
                    f"{_PASSAGE} AND c.id = ANY(%(ids)s) ORDER BY array_position(%(ids)s, c.id)",
                    scope(project_id, user_id, ids=cited),
                )
        if not rows:
            rows = await fetch_all(
                conn,
                dict_row,
                f"{_PASSAGE} AND c.document_id = %(document_id)s ORDER BY c.ordinal",
                scope(project_id, user_id, document_id=document.id),
            )
        found += rows
    return found

"""Study items across a reindex: a reindex replaces a document's chunks (and their ids), so the items
generated from them are carried over to the new chunks with the same text, and flagged
'source_changed' where a source chunk's text is gone.

Worker side: run inside the indexing transaction, with the project and document taken from the job."""

from dataclasses import dataclass
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import scalar_row, tuple_row

from core.store.sql.rows import fetch_all


@dataclass(frozen=True, slots=True)
class SourceSnapshot:
    """The document's chunks some item was generated from, before the reindex: id and md5 of the text."""

    chunk_ids: list[int]
    text_md5: list[str]


@dataclass(frozen=True, slots=True)
class Carried:
    items: int  # items whose sources were in the document
    flagged: int  # of which flagged 'source_changed' by this reindex


async def snapshot_sources(
    conn: AsyncConnection[object], *, project_id: UUID, document_id: UUID
) -> SourceSnapshot:
    """Call before the old chunks are deleted."""
    rows = await fetch_all(
        conn,
        tuple_row,
        "SELECT c.id, md5(c.text) AS text_md5 FROM chunks c"
        " WHERE c.project_id = %(project_id)s AND c.document_id = %(document_id)s"
        " AND c.id IN (SELECT s.id FROM questions q, unnest(q.source_chunk_ids) AS s(id)"
        "              WHERE q.project_id = %(project_id)s)",
        {"project_id": project_id, "document_id": document_id},
    )
    return SourceSnapshot([chunk_id for chunk_id, _ in rows], [md5 for _, md5 in rows])


# Each old source id maps to a new chunk of the document with the same text (the first by ordinal),
# or to nothing. Items keep their order of sources: mapped ids are replaced, unmapped ones kept (they
# join no chunk any more), and an item with any unmapped source is flagged.
_CARRY = """
WITH old AS (
    SELECT o.id, o.text_md5 FROM unnest(%(ids)s::bigint[], %(md5s)s::text[]) AS o(id, text_md5)
), mapped AS (
    SELECT old.id AS old_id,
           (SELECT c.id FROM chunks c
            WHERE c.project_id = %(project_id)s AND c.document_id = %(document_id)s
              AND md5(c.text) = old.text_md5
            ORDER BY c.ordinal LIMIT 1) AS new_id
    FROM old
)
UPDATE questions q
SET source_chunk_ids = (
        SELECT array_agg(coalesce(m.new_id, s.id) ORDER BY s.n)
        FROM unnest(q.source_chunk_ids) WITH ORDINALITY AS s(id, n)
        LEFT JOIN mapped m ON m.old_id = s.id),
    flag = CASE WHEN EXISTS (SELECT 1 FROM mapped m
                             WHERE m.old_id = ANY(q.source_chunk_ids) AND m.new_id IS NULL)
                THEN 'source_changed' ELSE q.flag END,
    updated_at = now()
WHERE q.project_id = %(project_id)s AND q.source_chunk_ids && %(ids)s::bigint[]
RETURNING EXISTS (SELECT 1 FROM mapped m
                  WHERE m.old_id = ANY(q.source_chunk_ids) AND m.new_id IS NULL) AS changed
"""


async def carry_sources(
    conn: AsyncConnection[object], *, project_id: UUID, document_id: UUID, before: SourceSnapshot
) -> Carried:
    """Call after the new chunks are in, in the same transaction."""
    if not before.chunk_ids:
        return Carried(0, 0)
    changed = await fetch_all(
        conn,
        scalar_row,
        _CARRY,
        {
            "project_id": project_id,
            "document_id": document_id,
            "ids": before.chunk_ids,
            "md5s": before.text_md5,
        },
    )
    return Carried(items=len(changed), flagged=sum(1 for flag in changed if flag))

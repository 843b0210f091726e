"""Fetches what the reranker and the caller need for the fused candidates, in one query."""

from uuid import UUID

import numpy as np
from psycopg import AsyncConnection

from core.retrieval.types import Candidate

_HYDRATE = """
SELECT c.id, c.document_id, c.document_version, c.ordinal, c.text, c.context_header, c.section_path,
       c.page_start, c.page_end, c.char_start, c.char_end, c.content_hash,
       d.title AS document_title, d.filename, d.source_type, d.kind,
       1 - (c.embedding <=> %(query)s) AS similarity
FROM chunks c JOIN documents d ON d.id = c.document_id AND d.project_id = c.project_id
WHERE c.project_id = %(project_id)s AND c.id = ANY(%(ids)s)
"""


async def hydrate(
    conn: AsyncConnection, *, project_id: UUID, query_vector: np.ndarray, candidates: list[Candidate]
) -> list[Candidate]:
    """Fills row and dense_similarity; drops ids that vanished meanwhile (a concurrent reindex)."""
    if not candidates:
        return []
    cur = await conn.execute(
        _HYDRATE, {"project_id": project_id, "query": query_vector, "ids": [c.chunk_id for c in candidates]}
    )
    rows = {row["id"]: row for row in await cur.fetchall()}
    kept = []
    for candidate in candidates:
        row = rows.get(candidate.chunk_id)
        if row is None:
            continue
        candidate.dense_similarity = float(row.pop("similarity"))
        candidate.row = row
        kept.append(candidate)
    return kept

"""Dense candidates: cosine distance on the HNSW index, scoped to one project.

A small project is scanned exactly (its rows through the project index, then sorted): that is
both faster than walking a global graph dominated by other projects and exact. A large project
uses HNSW with pgvector 0.8 iterative scans, which keep walking the graph past other projects' rows;
when that approximate scan still stops short of the rows the project has, the exact scan answers, so a
project never gets fewer candidates than asked while it has them."""

from typing import Any, NamedTuple
from uuid import UUID

import numpy as np
from psycopg import AsyncConnection

from core.retrieval.filter_sql import filter_clause
from core.retrieval.types import Filters

_EXACT = """
WITH scoped AS MATERIALIZED (
    SELECT c.id, c.embedding FROM chunks c
    WHERE c.project_id = %(project_id)s{filters}
)
SELECT id, (embedding <=> %(query)s) AS distance FROM scoped ORDER BY distance, id LIMIT %(depth)s
"""

_HNSW = """
WITH nearest AS MATERIALIZED (
    SELECT c.id, (c.embedding <=> %(query)s) AS distance FROM chunks c
    WHERE c.project_id = %(project_id)s{filters}
    ORDER BY c.embedding <=> %(query)s LIMIT %(depth)s
)
SELECT id, distance FROM nearest ORDER BY distance, id
"""


class DenseCandidates(NamedTuple):
    rows: list[tuple[int, float]]  # (chunk id, cosine distance), nearest first
    scan: str  # "exact", "hnsw", or "hnsw+exact" when the approximate scan fell short


async def project_chunk_count(conn: AsyncConnection, *, project_id: UUID) -> int:
    cur = await conn.execute(
        "SELECT coalesce(sum(chunk_count), 0) AS n FROM project_chunk_stats"
        " WHERE project_id = %(project_id)s",
        {"project_id": project_id},
    )
    row = await cur.fetchone()
    return int(row["n"]) if row else 0


async def dense_candidates(
    conn: AsyncConnection,
    *,
    project_id: UUID,
    query_vector: np.ndarray,
    filters: Filters,
    user_id: UUID | None = None,
    depth: int,
    exact_below: int,
    ef_search: int,
    project_size: int,
) -> DenseCandidates:
    clause, params = filter_clause(filters, user_id)
    params |= {"project_id": project_id, "query": query_vector, "depth": depth}
    if project_size <= exact_below:
        return DenseCandidates(await _scan(conn, _EXACT.format(filters=clause), params), "exact")
    rows = await hnsw_candidates(conn, clause, params, ef_search=ef_search, depth=depth)
    if len(rows) < min(depth, project_size):
        # The approximate scan stopped short: pgvector's iterative scan ends at its tuple and memory caps
        # (hnsw.max_scan_tuples, work_mem), and a vector no edge of the graph leads to is never reached;
        # a project that is a small part of a big index meets both. Exact is then the only way to
        # give it every candidate (a filter that matches fewer rows than the depth lands here too).
        return DenseCandidates(await _scan(conn, _EXACT.format(filters=clause), params), "hnsw+exact")
    return DenseCandidates(rows, "hnsw")


async def hnsw_candidates(
    conn: AsyncConnection, clause: str, params: dict[str, Any], *, ef_search: int, depth: int
) -> list[tuple[int, float]]:
    """The approximate scan alone, which may return fewer rows than `depth`."""
    async with conn.transaction():
        await conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        # The planner misjudges filtered vector queries and may pick "all the project's rows, then
        # sort", which at this size is the slow plan; we already chose the index, so insist on it.
        await conn.execute("SET LOCAL enable_sort = off")
        await conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(ef_search), depth)}")
        return await _scan(conn, _HNSW.format(filters=clause), params)


async def _scan(conn: AsyncConnection, sql: str, params: dict[str, Any]) -> list[tuple[int, float]]:
    cur = await conn.execute(sql, params)  # type: ignore[arg-type]
    rows: list[dict[str, Any]] = await cur.fetchall()
    return [(row["id"], row["distance"]) for row in rows]

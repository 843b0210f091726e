"""Query history: one audit row per agent request. API reads are owner-only, writes need membership,
both in the SQL; the worker's retention purge is the one query that spans projects."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from core.store.access import member_of, owner_of

AGENTS = ("qa", "planner", "writer", "generator", "evaluator")

_COLUMNS = (
    "h.id, h.project_id, h.user_id, h.agent, h.question, h.answer, h.outcome, h.retrieved_chunk_ids,"
    " h.cited_chunk_ids, h.timings_ms, h.tokens, h.request_id, h.run_id, h.created_at"
)
# The query's evaluation, if it was sampled and judged (NULL columns otherwise).
_EVALUATION = (
    "e.id AS evaluation_id, e.groundedness, e.relevance, e.hallucination_risk, e.flagged, e.claims,"
    " e.judge_model, e.created_at AS evaluated_at"
)


async def insert_query(
    conn: AsyncConnection,
    *,
    project_id: Any,
    user_id: Any,
    agent: str,
    question: str,
    answer: str | None = None,
    outcome: str | None = None,
    retrieved_chunk_ids: Sequence[int] = (),
    cited_chunk_ids: Sequence[int] = (),
    timings_ms: dict[str, float] | None = None,
    tokens: dict[str, dict[str, int]] | None = None,
    request_id: str | None = None,
    run_id: UUID | None = None,
) -> UUID | None:
    """The new row's id; None when the caller is not a member of the project (any more)."""
    cur = await conn.execute(
        "INSERT INTO query_history (project_id, user_id, agent, question, answer, outcome,"
        " retrieved_chunk_ids, cited_chunk_ids, timings_ms, tokens, request_id, run_id)"
        " SELECT p.id, %(user_id)s::uuid, %(agent)s::text, %(question)s::text, %(answer)s::text,"
        " %(outcome)s::text, %(retrieved)s::bigint[], %(cited)s::bigint[], %(timings)s::jsonb,"
        " %(tokens)s::jsonb, %(request_id)s::text, %(run_id)s::uuid"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')}"
        " RETURNING id",
        {
            "project_id": project_id,
            "user_id": user_id,
            "agent": agent,
            "question": question,
            "answer": answer,
            "outcome": outcome,
            "retrieved": list(retrieved_chunk_ids),
            "cited": list(cited_chunk_ids),
            "timings": Jsonb(timings_ms or {}),
            "tokens": Jsonb(tokens or {}),
            "request_id": request_id,
            "run_id": run_id,
        },
    )
    row = await cur.fetchone()
    return row["id"] if row else None


async def list_queries(
    conn: AsyncConnection,
    *,
    project_id: Any,
    user_id: Any,
    since: datetime | None = None,
    until: datetime | None = None,
    agent: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Newest first, each with its evaluation's columns (NULL when not judged). Owners only."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS}, {_EVALUATION} FROM query_history h"
        " LEFT JOIN rag_evaluations e ON e.query_id = h.id AND e.project_id = h.project_id"
        " WHERE h.project_id = %(project_id)s"
        " AND (%(since)s::timestamptz IS NULL OR h.created_at >= %(since)s)"
        " AND (%(until)s::timestamptz IS NULL OR h.created_at < %(until)s)"
        " AND (%(agent)s::text IS NULL OR h.agent = %(agent)s)"
        f" AND {owner_of('h.project_id')}"
        " ORDER BY h.created_at DESC, h.id LIMIT %(limit)s OFFSET %(offset)s",
        {
            "project_id": project_id,
            "user_id": user_id,
            "since": since,
            "until": until,
            "agent": agent,
            "limit": limit,
            "offset": offset,
        },
    )
    return await cur.fetchall()


async def query_to_judge(
    conn: AsyncConnection, *, project_id: Any, user_id: Any, query_id: Any
) -> dict[str, Any] | None:
    """The worker's read of a sampled answer: only while its asker is still a member of the project."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM query_history h"
        " WHERE h.id = %(query_id)s AND h.project_id = %(project_id)s"
        f" AND {member_of('h.project_id')}",
        {"project_id": project_id, "user_id": user_id, "query_id": query_id},
    )
    return await cur.fetchone()


async def purge_expired(conn: AsyncConnection, *, retention_days: int) -> int:
    """Deletes rows older than the retention window in every project (0 days: every row); returns
    how many. Maintenance, not an API read: no caller and no project to scope it to."""
    cur = await conn.execute(
        "DELETE FROM query_history WHERE created_at < now() - make_interval(days => %(days)s)",
        {"days": retention_days},
    )
    return cur.rowcount

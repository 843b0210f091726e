"""Query history: one audit row per agent request. API reads are owner-only, writes need membership,
both in the SQL; the worker's retention purge is the one query that spans projects."""

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import class_row, kwargs_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.runs.evaluations import StoredClaim
from core.store.sql.access import Connection, in_project, member_of, owner_of, scope
from core.store.sql.listing import Page, Period
from core.store.sql.rows import columns, fetch_all, fetch_one

AGENTS = ("qa", "planner", "writer", "generator", "evaluator")


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One agent request. `user_id` None once the asker left the project or erased their history."""

    id: UUID
    project_id: UUID
    user_id: UUID | None
    agent: str
    question: str
    answer: str | None
    outcome: str | None
    retrieved_chunk_ids: list[int]
    cited_chunk_ids: list[int]
    timings_ms: dict[str, float]
    tokens: dict[str, dict[str, int]]  # per model: prompt and completion tokens
    request_id: str | None
    run_id: UUID | None
    created_at: datetime
    confidence: dict[str, Any] | None  # a QA answer's {p, label, signals}; None for other rows


@dataclass(frozen=True, slots=True)
class RunRecord:
    """What one agent request leaves in its history row, as the agent runner hands it over (the project,
    the asker, the HTTP request and the LangGraph run are the caller's)."""

    agent: str
    question: str
    answer: str | None = None
    outcome: str | None = None
    retrieved_chunk_ids: Sequence[int] = ()
    cited_chunk_ids: Sequence[int] = ()
    timings_ms: dict[str, float] | None = None
    tokens: dict[str, dict[str, int]] | None = None  # per model: prompt and completion tokens
    confidence: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class QueryJudgement:
    """A query's groundedness evaluation as listed with it (its question and answer are the query's)."""

    id: UUID
    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool
    claims: list[StoredClaim]
    judge_model: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class JudgedEntry(HistoryEntry):
    evaluation: QueryJudgement | None  # None: not sampled, or not judged yet


_COLUMNS = columns(HistoryEntry, prefix="h.")
_JUDGEMENT_FIELDS = tuple(field.name for field in fields(QueryJudgement))
# The query's evaluation as evaluation_<field>, if it was sampled and judged (NULL columns otherwise).
_EVALUATION = ", ".join(f"e.{name} AS evaluation_{name}" for name in _JUDGEMENT_FIELDS)


def _judged_entry(**columns: Any) -> JudgedEntry:
    judgement = {name: columns.pop(f"evaluation_{name}") for name in _JUDGEMENT_FIELDS}
    evaluation = None if judgement["id"] is None else QueryJudgement(**judgement)
    return JudgedEntry(**columns, evaluation=evaluation)


async def insert_query(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    run: RunRecord,
    request_id: str | None = None,
    run_id: UUID | None = None,
) -> UUID | None:
    """The new row's id; None when the caller is not a member of the project (any more)."""
    query_id: UUID | None = await fetch_one(
        conn,
        scalar_row,
        "INSERT INTO query_history (project_id, user_id, agent, question, answer, outcome,"
        " retrieved_chunk_ids, cited_chunk_ids, timings_ms, tokens, request_id, run_id, confidence)"
        " SELECT p.id, %(user_id)s::uuid, %(agent)s::text, %(question)s::text, %(answer)s::text,"
        " %(outcome)s::text, %(retrieved)s::bigint[], %(cited)s::bigint[], %(timings)s::jsonb,"
        " %(tokens)s::jsonb, %(request_id)s::text, %(run_id)s::uuid, %(confidence)s::jsonb"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')}"
        " RETURNING id",
        {
            "project_id": project_id,
            "user_id": user_id,
            "agent": run.agent,
            "question": run.question,
            "answer": run.answer,
            "outcome": run.outcome,
            "retrieved": list(run.retrieved_chunk_ids),
            "cited": list(run.cited_chunk_ids),
            "timings": Jsonb(run.timings_ms or {}),
            "tokens": Jsonb(run.tokens or {}),
            "request_id": request_id,
            "run_id": run_id,
            "confidence": Jsonb(run.confidence) if run.confidence is not None else None,
        },
    )
    return query_id


async def list_queries(
    conn: Connection, *, project_id: UUID, user_id: UUID, period: Period, agent: str | None, page: Page
) -> list[JudgedEntry]:
    """Newest first, each with its evaluation (None when not judged). Owners only."""
    return await fetch_all(
        conn,
        kwargs_row(_judged_entry),
        f"SELECT {_COLUMNS}, {_EVALUATION} FROM query_history h"
        " LEFT JOIN rag_evaluations e ON e.query_id = h.id AND e.project_id = h.project_id"
        " WHERE h.project_id = %(project_id)s"
        " AND (%(since)s::timestamptz IS NULL OR h.created_at >= %(since)s)"
        " AND (%(until)s::timestamptz IS NULL OR h.created_at < %(until)s)"
        " AND (%(agent)s::text IS NULL OR h.agent = %(agent)s)"
        f" AND {owner_of('h.project_id')}"
        " ORDER BY h.created_at DESC, h.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, since=period.since, until=period.until, agent=agent, **page),
    )


async def query_to_judge(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, query_id: UUID
) -> HistoryEntry | None:
    """The worker's read of a sampled answer: only while its asker is still a member of the project."""
    query = f"SELECT {_COLUMNS} FROM query_history h WHERE h.id = %(query_id)s AND {in_project('h')}"
    return await fetch_one(
        conn, class_row(HistoryEntry), query, scope(project_id, user_id, query_id=query_id)
    )


async def purge_expired(conn: AsyncConnection[object], *, retention_days: int) -> int:
    """Deletes rows older than the retention window in every project (0 days: every row); returns
    how many. Maintenance, not an API read: no caller and no project to scope it to."""
    cur = await conn.execute(
        "DELETE FROM query_history WHERE created_at < now() - make_interval(days => %(days)s)",
        {"days": retention_days},
    )
    return cur.rowcount

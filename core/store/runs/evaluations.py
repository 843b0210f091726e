"""Groundedness evaluations of sampled QA answers: written by the judge job for a query whose asker
is still a member. An evaluation copies a student's question and answer, so its items are read only by
that student and the project's owners; every member reads the aggregates. All scoped in the SQL."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import class_row, tuple_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, in_project, member_of, owner_of, scope
from core.store.sql.listing import Page, Period
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required


class StoredClaim(TypedDict):
    """One claim of a judged answer as stored in the evaluation's JSON."""

    claim: str
    supported: bool
    chunk_ids: list[int]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """`user_id`: the asker, None once they left the project or erased their history; `query_id` None
    once the query left the history's retention window."""

    id: UUID
    project_id: UUID
    user_id: UUID | None
    query_id: UUID | None
    run_id: UUID | None
    question: str
    answer: str
    claims: list[StoredClaim]
    groundedness: float
    relevance: float
    hallucination_risk: float
    flagged: bool
    judge_model: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EvaluationStats:
    count: int
    mean_groundedness: float | None  # None when the window holds no evaluation
    flagged_share: float | None


_COLUMNS = columns(Evaluation, prefix="e.")
_WINDOW = (
    " e.project_id = %(project_id)s"
    " AND (%(since)s::timestamptz IS NULL OR e.created_at >= %(since)s)"
    " AND (%(until)s::timestamptz IS NULL OR e.created_at < %(until)s)"
)


async def chunk_texts(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, chunk_ids: Sequence[int]
) -> dict[int, str]:
    """Texts of the chunks that still exist (a reindex may have retired some), by id."""
    rows = await fetch_all(
        conn,
        tuple_row,
        f"SELECT c.id, c.text FROM chunks c WHERE {in_project('c')} AND c.id = ANY(%(ids)s)",
        scope(project_id, user_id, ids=list(chunk_ids)),
    )
    return {chunk_id: text for chunk_id, text in rows}


async def insert_evaluation(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    query_id: UUID,
    claims: Sequence[StoredClaim],
    groundedness: float,
    relevance: float,
    hallucination_risk: float,
    flagged: bool,
    judge_model: str,
) -> Evaluation | None:
    """Copies question, answer and run id from the query. None when the query is gone, its asker is
    no longer a member, or it was already judged (a retried job writes nothing twice)."""
    return await fetch_one(
        conn,
        class_row(Evaluation),
        "INSERT INTO rag_evaluations (project_id, user_id, query_id, run_id, question, answer, claims,"
        " groundedness, relevance, hallucination_risk, flagged, judge_model)"
        " SELECT h.project_id, h.user_id, h.id, h.run_id, h.question, coalesce(h.answer, ''),"
        " %(claims)s::jsonb,"
        " %(groundedness)s::real, %(relevance)s::real, %(risk)s::real, %(flagged)s::boolean,"
        " %(judge_model)s::text"
        " FROM query_history h WHERE h.id = %(query_id)s AND h.project_id = %(project_id)s"
        f" AND {member_of('h.project_id')}"
        " ON CONFLICT (query_id) WHERE query_id IS NOT NULL DO NOTHING"
        f" RETURNING {_COLUMNS.replace('e.', '')}",
        {
            "project_id": project_id,
            "user_id": user_id,
            "query_id": query_id,
            "claims": Jsonb(list(claims)),
            "groundedness": groundedness,
            "relevance": relevance,
            "risk": hallucination_risk,
            "flagged": flagged,
            "judge_model": judge_model,
        },
    )


async def list_evaluations(
    conn: Connection, *, project_id: UUID, user_id: UUID, period: Period, flagged: bool | None, page: Page
) -> list[Evaluation]:
    """Newest first, within [since, until): every item for an owner, only the caller's own for any
    other member (the rule is in the SQL, not left to the route)."""
    return await fetch_all(
        conn,
        class_row(Evaluation),
        f"SELECT {_COLUMNS} FROM rag_evaluations e WHERE {_WINDOW}"
        " AND (%(flagged)s::boolean IS NULL OR e.flagged = %(flagged)s)"
        f" AND {member_of('e.project_id')} AND (e.user_id = %(user_id)s OR {owner_of('e.project_id')})"
        " ORDER BY e.created_at DESC, e.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, since=period.since, until=period.until, flagged=flagged, **page),
    )


async def summarize(conn: Connection, *, project_id: UUID, user_id: UUID, period: Period) -> EvaluationStats:
    """Over the whole window (not one page)."""
    return await fetch_required(
        conn,
        class_row(EvaluationStats),
        "SELECT count(*) AS count, avg(e.groundedness)::float8 AS mean_groundedness,"
        " avg(e.flagged::int)::float8 AS flagged_share"
        f" FROM rag_evaluations e WHERE {_WINDOW} AND {member_of('e.project_id')}",
        scope(project_id, user_id, since=period.since, until=period.until),
    )

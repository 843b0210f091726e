"""Graded answers to questions, per user: a member reads only their own attempts, an owner (the
teacher) every member's; the rule is in each statement's SQL. Inserting respects the project's limit of
attempts per question atomically (one member's attempts at one question are serialised)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from core.store.access import member_of, owner_of, scope
from core.store.rows import fetch_all, fetch_one, fetch_required

_COLUMNS = (
    "a.id, a.project_id, a.question_id, a.user_id, a.answer, a.score, a.verdict, a.feedback,"
    " a.missing_points, a.citations, a.graded_by, a.created_at"
)


class StoredCitation(TypedDict):
    """A citation of the grade as stored in the attempt's JSON (agents/common/citations.Citation)."""

    chunk_id: int
    document_id: str
    document_title: str
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    excerpt: str


@dataclass(frozen=True, slots=True)
class Attempt:
    id: UUID
    project_id: UUID
    question_id: UUID
    user_id: UUID
    answer: str
    score: float
    verdict: str
    feedback: str
    missing_points: list[str]
    citations: list[StoredCitation]
    graded_by: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ListedAttempt(Attempt):
    """An attempt with its question's reference answer and explanation."""

    reference_answer: str
    explanation: str


@dataclass(frozen=True, slots=True)
class AttemptStats:
    count: int  # the caller's attempts at the question
    correct: bool  # whether one of them was correct


async def insert_attempt(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    answer: str,
    score: float,
    verdict: str,
    feedback: str,
    missing_points: Sequence[str],
    citations: Sequence[StoredCitation],
    graded_by: str,
    max_attempts: int | None = None,
) -> Attempt | None:
    """None when the question is not in a project the caller belongs to, or the caller already made
    `max_attempts` attempts at it (None: no limit); check `attempt_stats` to tell which."""
    async with conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('attempts:' || %s::text || ':' || %s::text, 0))",
            (user_id, question_id),
        )
        return await _insert(
            conn,
            {
                "project_id": project_id,
                "user_id": user_id,
                "question_id": question_id,
                "answer": answer,
                "score": score,
                "verdict": verdict,
                "feedback": feedback,
                "missing_points": Jsonb(list(missing_points)),
                "citations": Jsonb(list(citations)),
                "graded_by": graded_by,
                "max_attempts": max_attempts,
            },
        )


async def _insert(conn: AsyncConnection[object], params: dict[str, Any]) -> Attempt | None:
    return await fetch_one(
        conn,
        class_row(Attempt),
        "INSERT INTO question_attempts (project_id, question_id, user_id, answer, score, verdict,"
        " feedback, missing_points, citations, graded_by)"
        " SELECT q.project_id, q.id, %(user_id)s::uuid, %(answer)s::text, %(score)s::real,"
        " %(verdict)s::text, %(feedback)s::text, %(missing_points)s::jsonb, %(citations)s::jsonb,"
        " %(graded_by)s::text"
        " FROM questions q WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s"
        f" AND {member_of('q.project_id')}"
        " AND (%(max_attempts)s::int IS NULL OR (SELECT count(*) FROM question_attempts x"
        " WHERE x.project_id = q.project_id AND x.question_id = q.id AND x.user_id = %(user_id)s)"
        " < %(max_attempts)s::int)"
        f" RETURNING {_COLUMNS.replace('a.', '')}",
        params,
    )


async def attempt_stats(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, question_id: UUID
) -> AttemptStats:
    """How many attempts the caller made at the question, and whether one was correct."""
    return await fetch_required(
        conn,
        class_row(AttemptStats),
        "SELECT count(*) AS count, coalesce(bool_or(a.verdict = 'correct'), false) AS correct"
        " FROM question_attempts a"
        " WHERE a.project_id = %(project_id)s AND a.question_id = %(question_id)s"
        f" AND a.user_id = %(user_id)s AND {member_of('a.project_id')}",
        scope(project_id, user_id, question_id=question_id),
    )


async def list_attempts(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID | None = None,
    member_id: UUID | None = None,
    limit: int,
    offset: int,
) -> list[ListedAttempt]:
    """Attempts of `member_id` (None: of every member) at `question_id` (None: at any question), newest
    first, each with its question's reference answer and explanation. Whatever is asked, the SQL
    returns only the caller's own attempts unless the caller owns the project."""
    return await fetch_all(
        conn,
        class_row(ListedAttempt),
        f"SELECT {_COLUMNS}, q.answer AS reference_answer, q.explanation FROM question_attempts a"
        " JOIN questions q ON q.project_id = a.project_id AND q.id = a.question_id"
        " WHERE a.project_id = %(project_id)s"
        " AND (%(question_id)s::uuid IS NULL OR a.question_id = %(question_id)s)"
        " AND (%(member_id)s::uuid IS NULL OR a.user_id = %(member_id)s)"
        f" AND {member_of('a.project_id')} AND (a.user_id = %(user_id)s OR {owner_of('a.project_id')})"
        " ORDER BY a.created_at DESC, a.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, question_id=question_id, member_id=member_id, limit=limit, offset=offset),
    )

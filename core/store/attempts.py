"""Graded answers to questions, per user: a caller only ever reads their own attempts."""

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from core.store.access import member_of

_COLUMNS = (
    "a.id, a.project_id, a.question_id, a.user_id, a.answer, a.score, a.verdict, a.feedback,"
    " a.missing_points, a.citations, a.graded_by, a.created_at"
)


async def insert_attempt(
    conn: AsyncConnection,
    *,
    project_id: Any,
    user_id: Any,
    question_id: Any,
    answer: str,
    score: float,
    verdict: str,
    feedback: str,
    missing_points: Sequence[str],
    citations: Sequence[dict[str, Any]],
    graded_by: str,
) -> dict[str, Any] | None:
    """None when the question is not in a project the caller belongs to."""
    cur = await conn.execute(
        "INSERT INTO question_attempts (project_id, question_id, user_id, answer, score, verdict, feedback,"
        " missing_points, citations, graded_by)"
        " SELECT q.project_id, q.id, %(user_id)s::uuid, %(answer)s::text, %(score)s::real, %(verdict)s::text,"
        " %(feedback)s::text, %(missing_points)s::jsonb, %(citations)s::jsonb, %(graded_by)s::text"
        " FROM questions q WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s"
        f" AND {member_of('q.project_id')}"
        f" RETURNING {_COLUMNS.replace('a.', '')}",
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
        },
    )
    return await cur.fetchone()


async def list_attempts(
    conn: AsyncConnection, *, project_id: Any, user_id: Any, question_id: Any, limit: int, offset: int
) -> list[dict[str, Any]]:
    """The caller's own attempts at one question, newest first."""
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM question_attempts a"
        " WHERE a.project_id = %(project_id)s AND a.question_id = %(question_id)s"
        f" AND a.user_id = %(user_id)s AND {member_of('a.project_id')}"
        " ORDER BY a.created_at DESC, a.id LIMIT %(limit)s OFFSET %(offset)s",
        {
            "project_id": project_id,
            "user_id": user_id,
            "question_id": question_id,
            "limit": limit,
            "offset": offset,
        },
    )
    return await cur.fetchall()

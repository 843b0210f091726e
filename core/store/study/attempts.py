"""Graded answers to questions, per user: a member reads only their own attempts, an owner (the
teacher) every member's; the rule is in each statement's SQL. Inserting respects the project's limit of
attempts per question atomically (one member's attempts at one question are serialised).

A grade the calibration labels low is stored `provisional` (migration 0016): it counts against the
limit, but not as correct, until an owner reviews it (`review_attempt`: `confirmed` or `corrected`)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypedDict
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, member_of, owner_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required

# A correct grade that stands: a provisional one does not until an owner confirms it.
SETTLED_CORRECT = "(a.verdict = 'correct' AND a.status <> 'provisional')"
AttemptStatus = Literal["settled", "provisional", "confirmed", "corrected"]
Verdict = Literal["correct", "partially_correct", "incorrect"]


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
    status: str  # AttemptStatus
    confidence: dict[str, Any] | None  # the grade's {p, label, signals}; None: exact or not a model's


_COLUMNS = columns(Attempt, prefix="a.")


@dataclass(frozen=True, slots=True)
class ListedAttempt(Attempt):
    """An attempt with its question's reference answer and explanation."""

    reference_answer: str
    explanation: str


@dataclass(frozen=True, slots=True)
class ProvisionalAttempt(ListedAttempt):
    """An attempt waiting for the teacher: with its question and its student."""

    question: str
    student_email: str
    model_score: float | None
    model_verdict: str | None


@dataclass(frozen=True, slots=True)
class ReviewedAttempt(Attempt):
    """An attempt an owner just reviewed: the grader's own grade, who reviewed it, and whether it was
    its student's first attempt at the question (the study review's rating depends on it)."""

    model_score: float | None
    model_verdict: str | None
    reviewed_by: UUID
    reviewed_at: datetime
    first_try: bool


@dataclass(frozen=True, slots=True)
class AttemptStats:
    count: int  # the caller's attempts at the question
    correct: bool  # whether one of them was correct (and settled: a provisional one is not, yet)


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
    status: AttemptStatus = "settled",
    confidence: dict[str, Any] | None = None,
    max_attempts: int | None = None,
) -> Attempt | None:
    """None when the question is not in a project the caller belongs to, or the caller already made
    `max_attempts` attempts at it (None: no limit); check `attempt_stats` to tell which. A model's
    grade keeps its own score and verdict (`model_score`, `model_verdict`) for an owner's review."""
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
                "status": status,
                "confidence": None if confidence is None else Jsonb(confidence),
                "max_attempts": max_attempts,
            },
        )


async def _insert(conn: AsyncConnection[object], params: dict[str, Any]) -> Attempt | None:
    return await fetch_one(
        conn,
        class_row(Attempt),
        "INSERT INTO question_attempts (project_id, question_id, user_id, answer, score, verdict,"
        " feedback, missing_points, citations, graded_by, status, confidence, model_score, model_verdict)"
        " SELECT q.project_id, q.id, %(user_id)s::uuid, %(answer)s::text, %(score)s::real,"
        " %(verdict)s::text, %(feedback)s::text, %(missing_points)s::jsonb, %(citations)s::jsonb,"
        " %(graded_by)s::text, %(status)s::text, %(confidence)s::jsonb,"
        " CASE WHEN %(graded_by)s::text = 'model' THEN %(score)s::real END,"
        " CASE WHEN %(graded_by)s::text = 'model' THEN %(verdict)s::text END"
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
    """How many attempts the caller made at the question (provisional ones count), and whether one was
    correct (a provisional one does not count, until an owner confirms it)."""
    return await fetch_required(
        conn,
        class_row(AttemptStats),
        f"SELECT count(*) AS count, coalesce(bool_or({SETTLED_CORRECT}), false) AS correct"
        " FROM question_attempts a"
        " WHERE a.project_id = %(project_id)s AND a.question_id = %(question_id)s"
        f" AND a.user_id = %(user_id)s AND {member_of('a.project_id')}",
        scope(project_id, user_id, question_id=question_id),
    )


async def list_attempts(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID | None,
    member_id: UUID | None,
    page: Page,
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
        scope(project_id, user_id, question_id=question_id, member_id=member_id, **page),
    )


async def list_provisional(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, page: Page
) -> list[ProvisionalAttempt]:
    """Owners only (in the SQL): the project's provisional attempts, oldest first, each with its
    question, reference answer, student and the grader's grade. Anyone else gets an empty list."""
    return await fetch_all(
        conn,
        class_row(ProvisionalAttempt),
        f"SELECT {_COLUMNS}, q.answer AS reference_answer, q.explanation, q.question,"
        " u.email AS student_email, a.model_score, a.model_verdict FROM question_attempts a"
        " JOIN questions q ON q.project_id = a.project_id AND q.id = a.question_id"
        " JOIN users u ON u.id = a.user_id"
        " WHERE a.project_id = %(project_id)s AND a.status = 'provisional'"
        f" AND {owner_of('a.project_id')}"
        " ORDER BY a.created_at, a.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page),
    )


async def review_attempt(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    attempt_id: UUID,
    verdict: Verdict,
    score: float | None,
    default_score: float,
    at: datetime,
) -> ReviewedAttempt | None:
    """An owner's review of a provisional attempt (owners only, and only while it is provisional, in
    the SQL). The grader's verdict with no score, or with its own score, confirms it; anything else
    corrects it (with no score: `default_score`), the grader's grade staying in `model_score` and
    `model_verdict`. None: not the caller's to review, or already reviewed (`attempt_status` tells)."""
    return await fetch_one(
        conn,
        class_row(ReviewedAttempt),
        "UPDATE question_attempts a SET"
        " status = CASE WHEN a.verdict = %(verdict)s AND coalesce(%(score)s::real = a.score, true)"
        "  THEN 'confirmed' ELSE 'corrected' END,"
        " score = coalesce(%(score)s::real,"
        "  CASE WHEN a.verdict = %(verdict)s THEN a.score ELSE %(default_score)s::real END),"
        " verdict = %(verdict)s,"
        " model_score = coalesce(a.model_score, a.score),"
        " model_verdict = coalesce(a.model_verdict, a.verdict),"
        " reviewed_by = %(user_id)s, reviewed_at = %(at)s"
        " WHERE a.id = %(attempt_id)s AND a.project_id = %(project_id)s AND a.status = 'provisional'"
        f" AND {owner_of('a.project_id')}"
        f" RETURNING {_COLUMNS}, a.model_score, a.model_verdict, a.reviewed_by, a.reviewed_at,"
        " NOT EXISTS (SELECT 1 FROM question_attempts x WHERE x.project_id = a.project_id"
        "  AND x.question_id = a.question_id AND x.user_id = a.user_id"
        "  AND (x.created_at, x.id) < (a.created_at, a.id)) AS first_try",
        scope(
            project_id,
            user_id,
            attempt_id=attempt_id,
            verdict=verdict,
            score=score,
            default_score=default_score,
            at=at,
        ),
    )


async def attempt_status(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, attempt_id: UUID
) -> str | None:
    """Owners only: the attempt's status; None when it is not in the caller's project as its owner."""
    return await fetch_one(
        conn,
        scalar_row,
        "SELECT a.status FROM question_attempts a"
        f" WHERE a.id = %(attempt_id)s AND a.project_id = %(project_id)s AND {owner_of('a.project_id')}",
        scope(project_id, user_id, attempt_id=attempt_id),
    )

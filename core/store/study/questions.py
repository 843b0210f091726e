"""The question bank: every query scoped by project and by the caller's membership in SQL.

Also the reads of chunks that serve questions (sources to generate from, a question's own source
chunks), shaped like the retriever's hydrated rows so agents handle both the same way."""

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

import numpy as np
from psycopg import AsyncConnection
from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.content.chunks import ChunkColumns
from core.store.sql.access import Connection, in_project, member_of, scope, writer_of
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class Question:
    """A study item as COLUMNS selects it: `created_by_me` is whether the caller generated it."""

    id: UUID
    project_id: UUID
    document_id: UUID | None  # None once its document was deleted
    section_path: list[str]
    type: str
    question: str
    answer: str
    distractors: list[str]
    explanation: str
    difficulty: str
    confidence: float
    model_confidence: float | None
    support: float | None
    status: str
    review_state: str
    flag: str | None
    reviewed_by: UUID | None
    reviewed_at: datetime | None
    review_note: str | None
    source_chunk_ids: list[int]
    created_by: UUID | None
    created_by_me: bool
    created_at: datetime
    updated_at: datetime

    @property
    def options(self) -> list[str]:
        """A multiple-choice item's answer and distractors in a fixed order per item (the same for every
        reader and export); [] for other types."""
        if self.type != "multiple_choice":
            return []
        return sorted(
            [self.answer, *self.distractors],
            key=lambda option: hashlib.sha256(f"{self.id}:{option}".encode()).hexdigest(),
        )


@dataclass(frozen=True, slots=True)
class SourceChunk(ChunkColumns):
    """A chunk with its document's columns, the same columns as the retriever's hydrated rows."""

    document_title: str
    filename: str
    source_type: str
    kind: str


@dataclass(frozen=True, slots=True)
class NearestQuestion:
    id: UUID
    question: str
    similarity: float


# Binds %(user_id)s: created_by_me is whether the caller generated the item.
COLUMNS = (
    "q.id, q.project_id, q.document_id, q.section_path, q.type, q.question, q.answer, q.distractors,"
    " q.explanation, q.difficulty, q.confidence, q.model_confidence, q.support, q.status,"
    " q.review_state, q.flag, q.reviewed_by, q.reviewed_at, q.review_note,"
    " q.source_chunk_ids, q.created_by, coalesce(q.created_by = %(user_id)s, false) AS created_by_me,"
    " q.created_at, q.updated_at"
)


def studyable(alias: str = "q") -> str:
    """SQL: the items a member may see and study (binds %(user_id)s): approved, not flagged and not
    archived; or, where the project lets members study their own items, the member's own pending ones.
    Editors and owners curate the whole bank; this is what everyone studies."""
    return (
        f"({alias}.status <> 'archived' AND {alias}.flag IS NULL AND ({alias}.review_state = 'approved'"
        f" OR ({alias}.review_state = 'pending' AND {alias}.created_by = %(user_id)s"
        f" AND EXISTS (SELECT 1 FROM projects own WHERE own.id = {alias}.project_id"
        " AND own.students_study_own_items))))"
    )


# Same columns as core/retrieval/hydrate.py, so a sampled chunk looks like a retrieved one.
_CHUNK_COLUMNS = columns(
    SourceChunk,
    prefix="c.",
    computed={
        "document_title": "d.title",
        "filename": "d.filename",
        "source_type": "d.source_type",
        "kind": "d.kind",
    },
)

# Chunks spread across the project's documents: the i-th random pick of every document comes before
# any document's (i+1)-th, and chunks no question was made from yet come first.
_SAMPLE = f"""
SELECT {", ".join(f"s.{field.name}" for field in fields(SourceChunk))} FROM (
    SELECT {_CHUNK_COLUMNS},
           row_number() OVER (PARTITION BY c.document_id ORDER BY random()) AS pick,
           EXISTS (SELECT 1 FROM questions q WHERE q.project_id = c.project_id
                   AND c.id = ANY(q.source_chunk_ids)) AS used
    FROM chunks c JOIN documents d ON d.id = c.document_id AND d.project_id = c.project_id
    WHERE c.project_id = %(project_id)s AND length(c.text) >= %(min_chars)s AND {member_of("c.project_id")}
) s
ORDER BY s.used, s.pick, random()
LIMIT %(limit)s
"""

# One statement per question under a per-project transaction lock: the near-duplicate check and the
# insert cannot interleave with another generation run on the same project.
_INSERT = f"""
INSERT INTO questions (project_id, document_id, section_path, type, question, answer, distractors,
                       explanation, difficulty, confidence, model_confidence, support, status,
                       review_state, source_chunk_ids, embedding, created_by)
SELECT p.id, %(document_id)s::uuid, %(section_path)s::text[], %(type)s::text, %(question)s::text,
       %(answer)s::text, %(distractors)s::jsonb, %(explanation)s::text, %(difficulty)s::text,
       %(confidence)s::real, %(model_confidence)s::real, %(support)s::real, %(status)s::text,
       %(review_state)s::text, %(source_chunk_ids)s::bigint[], %(embedding)s::vector, %(user_id)s::uuid
FROM projects p
WHERE p.id = %(project_id)s AND ({writer_of("p.id")} OR (p.students_study_own_items AND {member_of("p.id")}))
  AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.project_id = p.id
                  AND 1 - (q.embedding <=> %(embedding)s) >= %(threshold)s)
RETURNING id
"""


@dataclass(frozen=True)
class NewQuestion:
    document_id: UUID | None
    section_path: Sequence[str]
    type: str
    question: str
    answer: str
    distractors: Sequence[str]
    explanation: str
    difficulty: str
    confidence: float
    model_confidence: float
    support: float
    status: str
    source_chunk_ids: Sequence[int]
    embedding: np.ndarray
    # Generated items wait for a teacher; seeding code (a course's own quiz, benchmarks) may approve.
    review_state: str = "pending"


async def sample_source_chunks(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, limit: int, min_chars: int
) -> list[SourceChunk]:
    return await fetch_all(
        conn,
        class_row(SourceChunk),
        _SAMPLE,
        scope(project_id, user_id, limit=limit, min_chars=min_chars),
    )


async def used_source_chunk_ids(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, chunk_ids: Sequence[int]
) -> set[int]:
    """Which of these chunks some question of the project was already generated from."""
    used = await fetch_all(
        conn,
        scalar_row,
        "SELECT DISTINCT s.id FROM questions q, unnest(q.source_chunk_ids) AS s(id)"
        f" WHERE q.project_id = %(project_id)s AND s.id = ANY(%(ids)s) AND {member_of('q.project_id')}",
        scope(project_id, user_id, ids=list(chunk_ids)),
    )
    return set(used)


async def source_chunks(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, chunk_ids: Sequence[int]
) -> list[SourceChunk]:
    """The chunks that still exist among these ids (a reindex replaces chunk ids), in the given order."""
    found = await fetch_all(
        conn,
        class_row(SourceChunk),
        f"SELECT {_CHUNK_COLUMNS} FROM chunks c"
        " JOIN documents d ON d.id = c.document_id AND d.project_id = c.project_id"
        f" WHERE c.project_id = %(project_id)s AND c.id = ANY(%(ids)s) AND {member_of('c.project_id')}",
        scope(project_id, user_id, ids=list(chunk_ids)),
    )
    rows = {row.id: row for row in found}
    return [rows[i] for i in chunk_ids if i in rows]


async def nearest_question(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, embedding: np.ndarray
) -> NearestQuestion | None:
    """The project's most similar question (any status: an archived one was rejected on purpose)."""
    return await fetch_one(
        conn,
        class_row(NearestQuestion),
        "SELECT q.id, q.question, 1 - (q.embedding <=> %(embedding)s) AS similarity FROM questions q"
        f" WHERE {in_project('q')}"
        " ORDER BY q.embedding <=> %(embedding)s LIMIT 1",
        scope(project_id, user_id, embedding=embedding),
    )


async def insert_question(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question: NewQuestion,
    duplicate_similarity: float,
) -> Question | None:
    """The stored question (review_state 'pending'), or None when a near-duplicate exists or the caller
    may not generate (editors and owners; any member where the project lets members study their own)."""
    params: dict[str, Any] = {
        **question.__dict__,
        "distractors": Jsonb(list(question.distractors)),
        "section_path": list(question.section_path),
        "source_chunk_ids": list(question.source_chunk_ids),
        "project_id": project_id,
        "user_id": user_id,
        "threshold": duplicate_similarity,
    }
    async with conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('questions:' || %(project_id)s::text, 0))",
            {"project_id": project_id},
        )
        question_id: UUID | None = await fetch_one(conn, scalar_row, _INSERT, params)
    if question_id is None:
        return None
    return await get_question(conn, project_id=project_id, user_id=user_id, question_id=question_id)


@dataclass(frozen=True, slots=True)
class BankFilter:
    """Which items of the bank a list shows; None: any."""

    statuses: Sequence[str]
    studying: bool = False  # only what the caller may study (see studyable), as students see the bank
    type: str | None = None
    document_id: UUID | None = None
    difficulty: str | None = None
    review_state: str | None = None
    flagged: bool | None = None


async def list_questions(
    conn: Connection, *, project_id: UUID, user_id: UUID, which: BankFilter, page: Page
) -> list[Question]:
    visible = f" AND {studyable()}" if which.studying else ""
    return await fetch_all(
        conn,
        class_row(Question),
        f"SELECT {COLUMNS} FROM questions q"
        f" WHERE {in_project('q')}{visible}"
        " AND q.status = ANY(%(statuses)s)"
        " AND (%(type)s::text IS NULL OR q.type = %(type)s)"
        " AND (%(document_id)s::uuid IS NULL OR q.document_id = %(document_id)s)"
        " AND (%(difficulty)s::text IS NULL OR q.difficulty = %(difficulty)s)"
        " AND (%(review_state)s::text IS NULL OR q.review_state = %(review_state)s)"
        " AND (%(flagged)s::boolean IS NULL OR (q.flag IS NOT NULL) = %(flagged)s)"
        " ORDER BY q.created_at, q.id LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **{**asdict(which), "statuses": list(which.statuses)}, **page),
    )


async def get_question(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    studying: bool = False,
) -> Question | None:
    """`studying`: None unless the caller may study the item (see studyable)."""
    visible = f" AND {studyable()}" if studying else ""
    query = f"SELECT {COLUMNS} FROM questions q WHERE q.id = %(question_id)s AND {in_project('q')}{visible}"
    return await fetch_one(
        conn, class_row(Question), query, scope(project_id, user_id, question_id=question_id)
    )

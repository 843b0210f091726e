"""A teacher's curation of the question bank: review (approve / reject) and edits of an item's text.

Editors and owners only, checked in each statement (writer_of); None when the item is not found or
the caller may not curate."""

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import numpy as np
from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from core.store.sql.access import scope, writer_of
from core.store.study.questions import Question, get_question

# Approving puts the item back in the bank (status 'active') and clears a 'source_changed' flag: the
# teacher has looked at it again. Rejecting archives it. Either way the reviewer and time are kept.
_REVIEW = f"""
UPDATE questions q
SET review_state = %(state)s,
    status = CASE WHEN %(state)s = 'approved' THEN 'active' ELSE 'archived' END,
    flag = CASE WHEN %(state)s = 'approved' THEN NULL ELSE q.flag END,
    reviewed_by = %(user_id)s, reviewed_at = now(), review_note = %(note)s, updated_at = now()
WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s AND {writer_of("q.project_id")}
RETURNING q.id
"""

# Columns an edit may set, with their SQL casts.
_EDITABLE = {
    "question": "text",
    "answer": "text",
    "distractors": "jsonb",
    "explanation": "text",
    "difficulty": "text",
    "status": "text",
    "embedding": "vector",
}


async def review_question(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    approve: bool,
    note: str | None,
) -> Question | None:
    cur = await conn.execute(
        _REVIEW,
        {
            "project_id": project_id,
            "user_id": user_id,
            "question_id": question_id,
            "state": "approved" if approve else "rejected",
            "note": note,
        },
    )
    if await cur.fetchone() is None:
        return None
    return await get_question(conn, project_id=project_id, user_id=user_id, question_id=question_id)


async def edit_question(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    changes: Mapping[str, str | Sequence[str] | np.ndarray],
) -> Question | None:
    """Sets the given columns (keys of _EDITABLE; the caller validated them against the item's type).
    The review state is left as it is: an edit is part of the teacher's curation."""
    params: dict[str, Any] = scope(project_id, user_id, question_id=question_id)
    assignments = []
    for key, value in changes.items():
        cast = _EDITABLE[key]  # a KeyError is a bug in the caller, never user input
        params[key] = Jsonb(list(value)) if key == "distractors" else value
        if isinstance(value, np.ndarray):
            params[key] = value.astype(np.float32)
        assignments.append(f"{key} = %({key})s::{cast}")
    if assignments:
        cur = await conn.execute(
            f"UPDATE questions q SET {', '.join(assignments)}, updated_at = now()"
            f" WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s AND {writer_of('q.project_id')}"
            " RETURNING q.id",
            params,
        )
        if await cur.fetchone() is None:
            return None
    return await get_question(conn, project_id=project_id, user_id=user_id, question_id=question_id)

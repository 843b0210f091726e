"""A teacher's curation of the study items (editors and owners): review an item (approve / reject)
and edit its text or status. Students study only approved items (backend/questions/router.py)."""

import asyncio
from typing import Any
from uuid import UUID

import numpy as np
from fastapi import APIRouter, HTTPException, status

from agents.question_generator.checks import fold
from backend.deps import DbDep, ProjectAccess, ProjectWriterDep, RetrieverDep
from backend.questions.schemas import QuestionOut, QuestionUpdate, ReviewRequest
from core.messages import Text
from core.store.study import question_curation, questions
from core.store.study.questions import Question

router = APIRouter(prefix="/projects/{project_id}", tags=["questions"])


def _not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, Text("question.not_found"))


@router.post("/questions/{question_id}/review")
async def review_question(
    question_id: UUID, body: ReviewRequest, access: ProjectWriterDep, db: DbDep
) -> QuestionOut:
    """approve: students may study it (status `active`, a `source_changed` flag cleared); reject: it
    leaves the bank (status `archived`). The reviewer, time and note are kept; review again at will."""
    async with db.connection() as conn:
        row = await question_curation.review_question(
            conn, **access.scope, question_id=question_id, approve=body.action == "approve", note=body.note
        )
    if row is None:
        raise _not_found()
    return QuestionOut.from_question(row, with_answers=True)


def _checked_changes(row: Question, body: QuestionUpdate) -> dict[str, Any]:
    """The edit's columns, checked against the item's type like a generated item (422 with the reason)."""
    changes = body.model_dump(exclude_unset=True, exclude_none=True)
    if not changes:
        raise HTTPException(422, Text("question.nothing_to_change"))
    if "distractors" in changes and row.type != "multiple_choice":
        raise HTTPException(422, Text("question.no_distractors", type=row.type))
    if row.type == "multiple_choice":
        answer = changes.get("answer", row.answer)
        distractors = [d.strip() for d in changes.get("distractors", row.distractors)]
        folded = {fold(d) for d in distractors}
        if len(distractors) != 3 or "" in folded or len(folded) != 3 or fold(answer) in folded:
            raise HTTPException(422, Text("question.distractors_needed"))
        if "distractors" in changes:
            changes["distractors"] = distractors
    if row.type == "flashcard":
        front, back = changes.get("question", row.question), changes.get("answer", row.answer)
        if fold(front) == fold(back):
            raise HTTPException(422, Text("question.flashcard_repeats"))
    return changes


async def _owned_row(db: DbDep, access: ProjectAccess, question_id: UUID) -> Question:
    async with db.connection() as conn:
        row = await questions.get_question(conn, **access.scope, question_id=question_id)
    if row is None:
        raise _not_found()
    return row


@router.patch("/questions/{question_id}")
async def update_question(
    question_id: UUID, body: QuestionUpdate, access: ProjectWriterDep, db: DbDep, retriever: RetrieverDep
) -> QuestionOut:
    """Edits question, answer, distractors (multiple choice), explanation, difficulty and/or status
    (`archived` takes the item out of the bank; `active`/`review` put it back). The review state is
    kept: an approved item stays approved with the teacher's edit."""
    changes = _checked_changes(await _owned_row(db, access, question_id), body)
    if "question" in changes:  # the near-duplicate check compares question texts' embeddings
        vector = await asyncio.to_thread(retriever.embeddings.embed_query, changes["question"])
        changes["embedding"] = np.asarray(vector, dtype=np.float32)
    async with db.connection() as conn:
        row = await question_curation.edit_question(
            conn, **access.scope, question_id=question_id, changes=changes
        )
    if row is None:
        raise _not_found()
    return QuestionOut.from_question(row, with_answers=True)

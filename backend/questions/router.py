"""The question bank: generate (editors; any member where the project lets members study their own
items), list and read (members). Attempts: backend/questions/attempts.py; review and edits:
backend/questions/curation.py.

Students (members who are not editors or owners) see only the items they may study (approved, not
flagged, not archived, or their own pending ones where the project allows: questions.studyable, in the
SQL), and never a reference answer in the bank (a flashcard's back is part of the card): it comes with
their own attempts once the question is done for them. Editors and owners curate the bank and see the
answers."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, HTTPException, Query, status

from agents.question_generator.state import QuestionType
from agents.runs.generation import generate
from backend.deps import DbDep, ProjectDep
from backend.questions.access import is_editor, visible_question
from backend.questions.schemas import (
    Difficulty,
    GenerateRequest,
    GenerateResponse,
    QuestionOut,
    QuestionStatus,
    RejectedOut,
    ReviewState,
)
from backend.web.agent_runs import RunnerDep
from backend.web.paging import PageDep
from core.messages import Text
from core.store.study import questions

router = APIRouter(prefix="/projects/{project_id}", tags=["questions"])


@router.post("/questions/generate", status_code=status.HTTP_201_CREATED)
async def generate_questions(
    body: GenerateRequest, access: ProjectDep, db: DbDep, runner: RunnerDep
) -> GenerateResponse:
    """Synchronous: about one model call per item (~10 s each on the local 1.5B model), so n ≤ 10.
    Every item starts `pending` until a teacher reviews it; items below the confidence threshold have
    status `review`; near-duplicates of the bank's items are not stored and are listed under `rejected`.
    Editors and owners; other members only where the project has `students_study_own_items`."""
    if not is_editor(access) and not access.project.students_study_own_items:
        raise HTTPException(status.HTTP_403_FORBIDDEN, Text("question.generate_editors_only"))
    result = await generate(
        runner, db, n=body.n, document_id=body.document_id, section=body.section, types=body.types
    )
    saved = [QuestionOut.from_question(row, with_answers=is_editor(access)) for row in result["saved"]]
    return GenerateResponse(
        questions=saved,
        active=sum(q.status == "active" for q in saved),
        review=sum(q.status == "review" for q in saved),
        rejected=[RejectedOut.from_rejection(r) for r in result["rejected"]],
        timings_ms={k: round(v, 1) for k, v in runner.context.timings_ms.items()},
        usage=runner.context.usage.by_model,
    )


@router.get("/questions")
async def list_questions(
    access: ProjectDep,
    db: DbDep,
    page: PageDep,
    status_: Annotated[QuestionStatus | None, Query(alias="status")] = None,
    type: QuestionType | None = None,
    document_id: UUID | None = None,
    difficulty: Difficulty | None = None,
    review_state: ReviewState | None = None,
    flagged: Annotated[bool | None, Query(description="true: flagged items only; false: unflagged")] = None,
) -> list[QuestionOut]:
    """Editors and owners see the whole bank (every status and review state; default: all); other
    members only the items they may study, without answers (see the module's docstring)."""
    editor = is_editor(access)
    allowed = ["active", "review", "archived"] if editor else ["active", "review"]
    statuses = [s for s in allowed if status_ is None or s == status_]
    async with db.connection() as conn:
        which = questions.BankFilter(
            statuses, studying=not editor, type=type, document_id=document_id, difficulty=difficulty,
            review_state=review_state, flagged=flagged,
        )  # fmt: skip
        rows = await questions.list_questions(conn, **access.scope, which=which, page=page)
    return [QuestionOut.from_question(row, with_answers=editor) for row in rows]


@router.get("/questions/{question_id}")
async def get_question(question_id: UUID, access: ProjectDep, db: DbDep) -> QuestionOut:
    row = await visible_question(db, access, question_id)
    return QuestionOut.from_question(row, with_answers=is_editor(access))

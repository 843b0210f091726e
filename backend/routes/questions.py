"""The question bank: generate (editors; any member where the project lets members study their own
items), list and read (members), and attempts graded by the Question Evaluator (any member, each
seeing only their own attempts; owners, the teacher, every member's). Review and edits:
backend/routes/curation.py.

Students (members who are not editors or owners) see only the items they may study (approved, not
flagged, not archived, or their own pending ones where the project allows: questions.studyable, in the
SQL), and never a reference answer in the bank (a flashcard's back is part of the card). It comes with
their own attempts once the question is done for them: an attempt was correct, or the project's
`max_attempts_per_question` is used up (with no limit: after any attempt). Until then an exactly graded
wrong option is not told which option was right. Editors and owners curate the bank, see the answers
and are not limited."""

from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, HTTPException, Query, status
from psycopg_pool import AsyncConnectionPool

from agents.question_evaluator.graph import chosen_option
from agents.question_evaluator.graph import graph as evaluator
from agents.question_generator.graph import graph as generator
from agents.question_generator.state import QUESTION_TYPES, QuestionType
from backend.admission import AdmissionDep
from backend.audit import AuditDep
from backend.clock import ClockDep
from backend.deps import (
    AgentContextDep,
    DbDep,
    ProjectAccess,
    ProjectDep,
    ProjectOwnerDep,
    QueueDep,
    SettingsDep,
)
from backend.question_schemas import (
    AttemptCreate,
    AttemptOut,
    AttemptResult,
    Difficulty,
    GenerateRequest,
    GenerateResponse,
    QuestionOut,
    QuestionStatus,
    RejectedOut,
    ReviewState,
)
from backend.routes import study
from core.retrieval import ProfileError
from core.store import attempts, documents, questions
from core.structured import StructuredOutputError

router = APIRouter(prefix="/projects/{project_id}", tags=["questions"])


def _is_editor(access: ProjectAccess) -> bool:
    return access.role in ("owner", "editor")


def _not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "Question not found.")


@router.post("/questions/generate", status_code=status.HTTP_201_CREATED)
async def generate_questions(
    body: GenerateRequest,
    access: ProjectDep,
    db: DbDep,
    ctx: AgentContextDep,
    audit: AuditDep,
    admission: AdmissionDep,
) -> GenerateResponse:
    """Synchronous: about one model call per item (~10 s each on the local 1.5B model), so n ≤ 10.
    Every item starts `pending` until a teacher reviews it; items below the confidence threshold have
    status `review`; near-duplicates of the bank's items are not stored and are listed under `rejected`.
    Editors and owners; other members only where the project has `students_study_own_items`."""
    if not _is_editor(access) and not access.project.students_study_own_items:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "Only editors and owners generate items in this project."
        )
    topic = " ".join(body.section) or None
    if body.document_id is not None:
        async with db.connection() as conn:
            document = await documents.get_document(
                conn, project_id=access.id, user_id=access.user.id, document_id=body.document_id
            )
        if document is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Document not found.")
        topic = topic or document.title
    try:
        async with admission.slot(user=str(access.user.id)):  # its turn at the chat model (429 if full)
            result = await generator.ainvoke(
                {
                    "n": body.n,
                    "document_id": body.document_id,
                    "section": tuple(body.section),
                    "types": tuple(body.types or QUESTION_TYPES),
                    "topic": topic,
                },
                config=audit.run_config(),
                context=ctx,
            )
    except ProfileError as error:
        raise HTTPException(422, str(error)) from error
    sources = list(dict.fromkeys(i for row in result["saved"] for i in row["source_chunk_ids"]))
    await audit.record(
        access,
        agent="generator",
        question=topic or "",
        answer="\n".join(str(row["question"]) for row in result["saved"]),
        outcome=result.get("reason") or "generated",
        retrieved=sources,
        cited=sources,
        timings_ms=ctx.timings_ms,
        tokens=ctx.usage.by_model,
        saved=len(result["saved"]),
        rejected=len(result["rejected"]),
    )
    if result.get("reason") == "no_sources":
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            "No indexed material to generate questions from: upload documents and wait until they are"
            " indexed, or check the document and section.",
        )
    saved = [QuestionOut.from_row(row, with_answers=_is_editor(access)) for row in result["saved"]]
    return GenerateResponse(
        questions=saved,
        active=sum(q.status == "active" for q in saved),
        review=sum(q.status == "review" for q in saved),
        rejected=[RejectedOut.from_rejection(r) for r in result["rejected"]],
        timings_ms={k: round(v, 1) for k, v in ctx.timings_ms.items()},
        usage=ctx.usage.by_model,
    )


@router.get("/questions")
async def list_questions(
    access: ProjectDep,
    db: DbDep,
    status_: Annotated[QuestionStatus | None, Query(alias="status")] = None,
    type: QuestionType | None = None,
    document_id: UUID | None = None,
    difficulty: Difficulty | None = None,
    review_state: ReviewState | None = None,
    flagged: Annotated[bool | None, Query(description="true: flagged items only; false: unflagged")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[QuestionOut]:
    """Editors and owners see the whole bank (every status and review state; default: all); other
    members only the items they may study, without answers (see the module's docstring)."""
    editor = _is_editor(access)
    allowed = ["active", "review", "archived"] if editor else ["active", "review"]
    statuses = [s for s in allowed if status_ is None or s == status_]
    async with db.connection() as conn:
        rows = await questions.list_questions(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            statuses=statuses,
            studying=not editor,
            type=type,
            document_id=document_id,
            difficulty=difficulty,
            review_state=review_state,
            flagged=flagged,
            limit=limit,
            offset=offset,
        )
    return [QuestionOut.from_row(row, with_answers=editor) for row in rows]


async def _visible_question(db: AsyncConnectionPool, access: ProjectAccess, question_id: UUID) -> dict:
    async with db.connection() as conn:
        row = await questions.get_question(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            question_id=question_id,
            studying=not _is_editor(access),
        )
    if row is None:
        raise _not_found()
    return row


@router.get("/questions/{question_id}")
async def get_question(question_id: UUID, access: ProjectDep, db: DbDep) -> QuestionOut:
    row = await _visible_question(db, access, question_id)
    return QuestionOut.from_row(row, with_answers=_is_editor(access))


def _limit(access: ProjectAccess) -> int | None:
    """Attempts allowed per question: the project's limit for students, none for editors and owners."""
    return None if _is_editor(access) else access.project.max_attempts_per_question


def _done(access: ProjectAccess, *, attempts: int, correct: bool) -> bool:
    """Whether the reference answer may be shown to this attempter (see the module's docstring)."""
    limit = _limit(access)
    return _is_editor(access) or correct or limit is None or attempts >= limit


def _limit_reached(limit: int) -> HTTPException:
    return HTTPException(
        status.HTTP_409_CONFLICT,
        f"You have used all {limit} attempts at this question allowed in this project.",
    )


@router.post("/questions/{question_id}/attempts", status_code=status.HTTP_201_CREATED)
async def attempt_question(
    question_id: UUID,
    body: AttemptCreate,
    access: ProjectDep,
    db: DbDep,
    ctx: AgentContextDep,
    audit: AuditDep,
    admission: AdmissionDep,
    settings: SettingsDep,
    queue: QueueDep,
    clock: ClockDep,
) -> AttemptResult:
    """Grades the answer (exactly, when it names a multiple-choice option; otherwise with the model
    against the reference answer and up to five chunks of the question's document) and stores it.
    409 when the caller has used the project's attempts at this question (checked before grading, and
    again atomically when storing)."""
    question = await _visible_question(db, access, question_id)
    limit, stored = _limit(access), settings.attempt_retention_days > 0
    scope = {"project_id": access.id, "user_id": access.user.id, "question_id": question_id}
    async with db.connection() as conn:
        before = await attempts.attempt_stats(conn, **scope)
    if stored and limit is not None and before["count"] >= limit:
        raise _limit_reached(limit)
    try:
        # An answer naming a multiple-choice option is graded exactly, without the model: no slot.
        needs_model = chosen_option(question, body.answer) is None
        turn = admission.slot(user=str(access.user.id)) if needs_model else nullcontext()
        async with turn:  # its turn at the chat model (429 if full)
            grade = await evaluator.ainvoke(
                {"question": question, "answer": body.answer}, config=audit.run_config(), context=ctx
            )
    except StructuredOutputError as error:
        await audit.record_failure(access, error, agent="evaluator", question=question["question"], ctx=ctx)
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, f"The model did not produce a grade: {error}"
        ) from error
    correct = grade["verdict"] == "correct"
    # Without stored attempts nothing can be counted: the reference is shown as with no limit.
    done = not stored or _done(access, attempts=before["count"] + 1, correct=correct or before["correct"])
    feedback, missing = grade["feedback"], grade["missing_points"]
    if grade["graded_by"] == "choice" and not correct and not done:
        feedback, missing = "Not quite: that is not the right option.", []  # the next try is not a given
    fields = {
        "answer": body.answer,
        "score": grade["score"],
        "verdict": grade["verdict"],
        "feedback": feedback,
        "missing_points": missing,
        "citations": [c.model_dump() for c in grade["citations"]],
        "graded_by": grade["graded_by"],
    }
    if stored:
        async with db.connection() as conn:
            row = await attempts.insert_attempt(conn, **scope, **fields, max_attempts=limit)
            # None: another attempt was stored meanwhile and used the last one, or the question is gone.
            used = (await attempts.attempt_stats(conn, **scope))["count"] if row is None else 0
        if limit is not None and used >= limit:
            raise _limit_reached(limit)
        if row is None:  # the question was deleted with its project meanwhile
            raise _not_found()
    else:
        now = datetime.now(UTC)
        row = {**fields, "id": None, "question_id": question_id, "user_id": access.user.id, "created_at": now}
    # The attempt also reviews the item in the caller's study queue (the rating rule: README, study loop).
    await study.review_attempt(
        db,
        queue,
        access,
        question_id,
        verdict=grade["verdict"],
        score=grade["score"],
        first_try=before["count"] == 0,
        now=clock(),
    )
    # The student's answer is theirs (their attempts hold it); the audit row keeps the grade's feedback.
    cited = [c.chunk_id for c in grade["citations"]]
    await audit.record(
        access,
        agent="evaluator",
        question=question["question"],
        answer=feedback,
        outcome=grade["verdict"],
        retrieved=[c.chunk_id for c in grade.get("retrieved", [])] or cited,
        cited=cited,
        timings_ms=ctx.timings_ms,
        tokens=ctx.usage.by_model,
        question_id=str(question_id),
        attempt_id=str(row["id"]) if row["id"] else None,
        graded_by=grade["graded_by"],
    )
    left = None if not stored or limit is None else max(0, limit - before["count"] - 1)
    return AttemptResult(
        **{key: row[key] for key in AttemptOut.model_fields if key in row},
        reference_answer=question["answer"] if done else None,
        explanation=question["explanation"] if done else None,
        attempts_left=left,
        timings_ms={k: round(v, 1) for k, v in ctx.timings_ms.items()},
        usage=ctx.usage.by_model,
    )


def _attempts_out(rows: list[dict], *, with_reference: bool) -> list[AttemptOut]:
    hidden = {} if with_reference else {"reference_answer": None, "explanation": None}
    return [AttemptOut(**{**row, **hidden}) for row in rows]


@router.get("/questions/{question_id}/attempts")
async def list_attempts(
    question_id: UUID,
    access: ProjectDep,
    db: DbDep,
    user_id: Annotated[UUID | None, Query(description="owners: this member's attempts")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[AttemptOut]:
    """The caller's own attempts, newest first, with the reference answer once the question is done for
    them; an owner may name a member with `user_id` (others: 403)."""
    if user_id is not None and user_id != access.user.id and access.role != "owner":
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Only the project's owner can read others' attempts.")
    await _visible_question(db, access, question_id)
    scope = {"project_id": access.id, "user_id": access.user.id, "question_id": question_id}
    async with db.connection() as conn:
        rows = await attempts.list_attempts(
            conn, **scope, member_id=user_id or access.user.id, limit=limit, offset=offset
        )
        mine = await attempts.attempt_stats(conn, **scope)
    # Owners see the bank's answers anyway; anyone else only where they are done with the question.
    shown = access.role == "owner" or _done(access, attempts=mine["count"], correct=mine["correct"])
    return _attempts_out(rows, with_reference=shown)


@router.get("/attempts")
async def list_class_attempts(
    access: ProjectOwnerDep,
    db: DbDep,
    question_id: UUID | None = None,
    user_id: UUID | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[AttemptOut]:
    """Owners (the teacher): every member's attempts in the project, newest first, optionally of one
    question and/or one member."""
    async with db.connection() as conn:
        rows = await attempts.list_attempts(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            question_id=question_id,
            member_id=user_id,
            limit=limit,
            offset=offset,
        )
    return _attempts_out(rows, with_reference=True)

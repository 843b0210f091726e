"""Attempts at the bank's questions, graded by the Question Evaluator (agents/runs/attempts.py): any
member attempts, each seeing only their own attempts; owners, the teacher, every member's.

A student's attempts carry the reference answer once the question is done for them: an attempt was
correct, or the project's `max_attempts_per_question` is used up (with no limit: after any attempt).
Until then an exactly graded wrong option is not told which option was right. Editors and owners see
the answers and are not limited.

A model's grade labelled low (its `confidence`) is `provisional`: its feedback says the teacher will
check it, it is queued for the owners (GET .../attempts/provisional) and it neither shows the reference
nor moves mastery until an owner confirms or corrects it (POST .../attempts/{id}/review)."""

from typing import Annotated, TypeVar
from uuid import UUID

from fastapi import APIRouter, Depends, HTTPException, Query, status

from agents.runs.attempts import attempt, provisional_note, review
from backend.deps import DbDep, ProjectAccess, ProjectDep, ProjectOwnerDep, QueueDep, SettingsDep
from backend.questions.access import attempter, visible_question
from backend.questions.schemas import (
    AttemptCreate,
    AttemptOut,
    AttemptResult,
    AttemptReview,
    ProvisionalAttemptOut,
    ReviewedAttemptOut,
)
from backend.web.agent_runs import RunnerDep
from backend.web.audit import AuditDep
from backend.web.clock import ClockDep
from backend.web.paging import Page, PageDep, paging
from backend.web.project_log import record_project_event
from core.messages import Text
from core.store.sql.access import Connection
from core.store.study import attempts
from core.store.study.attempts import ListedAttempt, ReviewedAttempt

Out = TypeVar("Out", bound=AttemptOut)
router = APIRouter(prefix="/projects/{project_id}", tags=["questions"])


@router.post("/questions/{question_id}/attempts", status_code=status.HTTP_201_CREATED)
async def attempt_question(
    question_id: UUID,
    body: AttemptCreate,
    access: ProjectDep,
    db: DbDep,
    runner: RunnerDep,
    settings: SettingsDep,
    queue: QueueDep,
    clock: ClockDep,
) -> AttemptResult:
    """Grades the answer (exactly, when it names a multiple-choice option; otherwise with the model
    against the reference answer and up to five chunks of the question's document) and stores it.
    409 when the caller has used the project's attempts at this question (checked before grading, and
    again atomically when storing)."""
    question = await visible_question(db, access, question_id)
    stored = settings.retention.attempt_days > 0
    done = await attempt(
        runner, db, queue, question, body.answer, attempter=attempter(access), stored=stored, now=clock()
    )
    result = AttemptResult(
        **{key: done.row[key] for key in AttemptOut.model_fields if key in done.row},
        reference_answer=question.answer if done.done else None,
        explanation=question.explanation if done.done else None,
        attempts_left=done.attempts_left,
        timings_ms={k: round(v, 1) for k, v in runner.context.timings_ms.items()},
        usage=runner.context.usage.by_model,
    )
    return _told(result, access)


def _told(out: Out, access: ProjectAccess) -> Out:
    """A provisional grade's feedback opens with the note that the teacher will check it."""
    if out.status != "provisional":
        return out
    note = provisional_note(access.project.language, out.answer)
    return out.model_copy(update={"feedback": f"{note} {out.feedback}".strip()})


def _attempts_out(
    rows: list[ListedAttempt], access: ProjectAccess, *, with_reference: bool
) -> list[AttemptOut]:
    hidden = {} if with_reference else {"reference_answer": None, "explanation": None}
    return [_told(AttemptOut.model_validate(row).model_copy(update=hidden), access) for row in rows]


@router.get("/questions/{question_id}/attempts")
async def list_attempts(
    question_id: UUID,
    access: ProjectDep,
    db: DbDep,
    page: PageDep,
    user_id: Annotated[UUID | None, Query(description="owners: this member's attempts")] = None,
) -> list[AttemptOut]:
    """The caller's own attempts, newest first, with the reference answer once the question is done for
    them; an owner may name a member with `user_id` (others: 403)."""
    if user_id is not None and user_id != access.user.id and access.role != "owner":
        raise HTTPException(status.HTTP_403_FORBIDDEN, Text("attempts.others_owner_only"))
    await visible_question(db, access, question_id)
    member_id = user_id or access.user.id
    async with db.connection() as conn:
        rows = await attempts.list_attempts(
            conn, **access.scope, question_id=question_id, member_id=member_id, page=page
        )
        mine = await attempts.attempt_stats(conn, **access.scope, question_id=question_id)
    # Owners see the bank's answers anyway; anyone else only where they are done with the question.
    shown = access.role == "owner" or attempter(access).done(attempts=mine.count, correct=mine.correct)
    return _attempts_out(rows, access, with_reference=shown)


@router.get("/attempts")
async def list_class_attempts(
    access: ProjectOwnerDep,
    db: DbDep,
    page: Annotated[Page, Depends(paging(default=100, most=500))],
    question_id: UUID | None = None,
    user_id: UUID | None = None,
) -> list[AttemptOut]:
    """Owners (the teacher): every member's attempts in the project, newest first, optionally of one
    question and/or one member."""
    async with db.connection() as conn:
        rows = await attempts.list_attempts(
            conn, **access.scope, question_id=question_id, member_id=user_id, page=page
        )
    return _attempts_out(rows, access, with_reference=True)


@router.get("/attempts/provisional")
async def list_provisional(
    access: ProjectOwnerDep, db: DbDep, page: Annotated[Page, Depends(paging(default=100, most=500))]
) -> list[ProvisionalAttemptOut]:
    """Owners (the teacher): the grades waiting for review, oldest first, each with its question,
    reference answer, student, answer, the grader's grade and its confidence (editors 403, others 404)."""
    async with db.connection() as conn:
        rows = await attempts.list_provisional(conn, **access.scope, page=page)
    return [ProvisionalAttemptOut.model_validate(row) for row in rows]


@router.post("/attempts/{attempt_id}/review")
async def review_attempt(
    attempt_id: UUID,
    body: AttemptReview,
    audit: AuditDep,
    access: ProjectOwnerDep,
    db: DbDep,
    queue: QueueDep,
    clock: ClockDep,
) -> ReviewedAttemptOut:
    """Owners: confirm a provisional grade (the grader's verdict, with no score or its own) or correct it
    (another verdict and/or score). The grade then enters the student's mastery and study schedule.
    404 for an attempt not in this project; 409 when it is not provisional (reviewed already)."""

    async def log(conn: Connection, reviewed: ReviewedAttempt) -> None:
        details = {
            "question_id": str(reviewed.question_id),
            "status": reviewed.status,
            "verdict": reviewed.verdict,
            "score": reviewed.score,
            "model_verdict": reviewed.model_verdict,
            "model_score": reviewed.model_score,
        }
        await record_project_event(
            conn, audit, access, "attempt.reviewed", target_user_id=reviewed.user_id,
            target_id=reviewed.id, details=details,
        )  # fmt: skip

    reviewed = await review(
        db, queue, access.scope, attempt_id, verdict=body.verdict, score=body.score, now=clock(), log=log
    )
    return ReviewedAttemptOut.model_validate(reviewed)

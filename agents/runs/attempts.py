"""An attempt at a question: graded by the Question Evaluator (exactly, when the answer names a
multiple-choice option; otherwise by the model), stored within the project's attempt limit, reviewed in
the attempter's study queue, and audited. What a student may see of the answer: Attempter.done.

A model's grade the calibration labels low (core/confidence) is provisional: stored and counted against
the limit, but neither correct for `done` nor a study review until an owner confirms or corrects it
(`review`), which then makes it the student's review of the item."""

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from arq.connections import ArqRedis
from psycopg_pool import AsyncConnectionPool

from agents.question_evaluator.graph import chosen_option
from agents.question_evaluator.graph import graph as evaluator
from agents.runs.errors import Conflict, NotFound
from agents.runs.service import AgentRunner, Scope
from agents.runs.specs import EVALUATOR
from core.messages import Text
from core.store.runs.history import RunRecord
from core.store.sql.access import Connection
from core.store.study import attempts
from core.store.study.attempts import ReviewedAttempt
from core.store.study.questions import Question
from core.study.reviews import review_attempt
from core.text.words import is_portuguese

Verdict = Literal["correct", "partially_correct", "incorrect"]
# What a student is told of a provisional grade, ahead of the grader's feedback.
PROVISIONAL_NOTE = {
    "en": "Provisional — your teacher will check this grade.",
    "pt": "Provisória — o seu professor vai conferir esta nota.",
}
# A corrected verdict without a score of its own.
VERDICT_SCORES: dict[str, float] = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}


@dataclass(frozen=True)
class Attempter:
    """What the project allows this attempter: editors and owners see the answers and are not limited."""

    editor: bool
    limit: int | None  # attempts allowed per question; None: no limit

    def done(self, *, attempts: int, correct: bool) -> bool:
        """Whether the reference answer may be shown to this attempter."""
        return self.editor or correct or self.limit is None or attempts >= self.limit


@dataclass(frozen=True)
class Attempted:
    row: dict[str, Any]  # the stored attempt (its id None when attempts are not stored)
    done: bool  # the reference answer may be shown
    attempts_left: int | None  # under the limit; None: unlimited, or attempts are not stored


def limit_reached(limit: int) -> Conflict:
    return Conflict(Text("attempts.limit_reached", limit=limit))


def question_not_found() -> NotFound:
    return NotFound(Text("question.not_found"))


async def attempt(
    runner: AgentRunner,
    pool: AsyncConnectionPool,
    queue: ArqRedis,
    question: Question,
    answer: str,
    *,
    attempter: Attempter,
    stored: bool,
    now: datetime,
) -> Attempted:
    """Conflict when the attempter has used the project's attempts at this question (checked before
    grading, and again atomically when storing); UnusableReply when the model gave no grade."""
    limit, scope = attempter.limit, _scope(runner, question)
    async with pool.connection() as conn:
        before = await attempts.attempt_stats(conn, **scope)
    if stored and limit is not None and before.count >= limit:
        raise limit_reached(limit)
    # An answer naming a multiple-choice option is graded exactly, without the model: no slot.
    graded_question = asdict(question)  # the evaluator reads a question row
    inputs = {"question": graded_question, "answer": answer}
    needs_model = chosen_option(graded_question, answer) is None
    grade = await runner.invoke(
        EVALUATOR, evaluator, inputs, question=question.question, needs_model=needs_model
    )
    # Without stored attempts nothing can be counted: the reference is shown as with no limit, and no
    # grade can wait for the teacher.
    provisional = stored and is_provisional(grade)
    correct = (grade["verdict"] == "correct" and not provisional) or before.correct
    done = not stored or attempter.done(attempts=before.count + 1, correct=correct)
    fields = _fields(answer, grade, told=grade["verdict"] == "correct" or done, provisional=provisional)
    row = await _store(pool, scope, fields, limit) if stored else _unstored(scope, fields)
    if not provisional:  # a provisional grade is reviewed once an owner confirms or corrects it
        await review_attempt(
            pool,
            queue,
            **scope,
            verdict=grade["verdict"],
            score=grade["score"],
            first_try=before.count == 0,
            now=now,
        )
    await _record(runner, question, grade, row, answer=fields["feedback"])
    left = None if not stored or limit is None else max(0, limit - before.count - 1)
    return Attempted(row=row, done=done, attempts_left=left)


class AttemptScope(Scope):
    question_id: UUID


def _scope(runner: AgentRunner, question: Question) -> AttemptScope:
    return {**runner.scope, "question_id": question.id}


def is_provisional(grade: dict[str, Any]) -> bool:
    """A model's grade labelled low waits for the teacher; an exact one, or one made without a model
    call (forfeited, off the subject: no confidence), is settled."""
    confidence = grade.get("confidence") or {}
    return grade["graded_by"] == "model" and confidence.get("label") == "low"


def provisional_note(language: str, answer: str) -> str:
    """The note in the project's language, or the answer's (Portuguese answers in an 'auto' project)."""
    return PROVISIONAL_NOTE["pt" if language == "pt" or is_portuguese(answer) else "en"]


def _fields(answer: str, grade: dict[str, Any], *, told: bool, provisional: bool) -> dict[str, Any]:
    """The attempt's columns. An exactly graded wrong option is not told which one was right while the
    question is not done for its attempter: the next try is not a given."""
    feedback, missing = grade["feedback"], grade["missing_points"]
    if grade["graded_by"] == "choice" and not told:
        feedback, missing = "Not quite: that is not the right option.", []
    return {
        "answer": answer,
        "score": grade["score"],
        "verdict": grade["verdict"],
        "feedback": feedback,
        "missing_points": missing,
        "citations": [c.model_dump() for c in grade["citations"]],
        "graded_by": grade["graded_by"],
        "status": "provisional" if provisional else "settled",
        "confidence": grade.get("confidence"),
    }


async def _store(
    pool: AsyncConnectionPool, scope: AttemptScope, fields: dict[str, Any], limit: int | None
) -> dict[str, Any]:
    async with pool.connection() as conn:
        row = await attempts.insert_attempt(conn, **scope, **fields, max_attempts=limit)
        # None: another attempt was stored meanwhile and used the last one, or the question is gone.
        used = (await attempts.attempt_stats(conn, **scope)).count if row is None else 0
    if limit is not None and used >= limit:
        raise limit_reached(limit)
    if row is None:  # the question was deleted with its project meanwhile
        raise question_not_found()
    return asdict(row)


def _unstored(scope: AttemptScope, fields: dict[str, Any]) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        **fields,
        "id": None,
        "question_id": scope["question_id"],
        "user_id": scope["user_id"],
        "created_at": now,
    }


async def _record(
    runner: AgentRunner, question: Question, grade: dict[str, Any], row: dict[str, Any], *, answer: str
) -> None:
    # The student's answer is theirs (their attempts hold it); the audit row keeps the grade's feedback.
    cited = [c.chunk_id for c in grade["citations"]]
    run = RunRecord(
        EVALUATOR.name,
        question.question,
        answer=answer,
        outcome=grade["verdict"],
        retrieved_chunk_ids=[c.chunk_id for c in grade.get("retrieved", [])] or cited,
        cited_chunk_ids=cited,
        confidence=grade.get("confidence"),
    )
    await runner.record(
        run,
        question_id=str(question.id),
        attempt_id=str(row["id"]) if row["id"] else None,
        graded_by=grade["graded_by"],
        status=row["status"],
    )


async def review(
    pool: AsyncConnectionPool,
    queue: ArqRedis,
    scope: Scope,
    attempt_id: UUID,
    *,
    verdict: Verdict,
    score: float | None,
    now: datetime,
    log: Callable[[Connection, ReviewedAttempt], Awaitable[None]],
) -> ReviewedAttempt:
    """An owner confirms or corrects a provisional grade (the SQL checks both): `log` records it in the
    same transaction (the project's audit log); then the grade, as it now stands, is the student's
    review of the item (first_try: whether it was their first attempt at it). NotFound when the
    attempt is not in the caller's project as its owner; Conflict when it is no longer provisional."""
    async with pool.connection() as conn, conn.transaction():
        reviewed = await attempts.review_attempt(
            conn,
            **scope,
            attempt_id=attempt_id,
            verdict=verdict,
            score=score,
            default_score=VERDICT_SCORES[verdict],
            at=now,
        )
        if reviewed is None:
            status = await attempts.attempt_status(conn, **scope, attempt_id=attempt_id)
            if status is None:
                raise NotFound(Text("attempts.not_found"))
            raise Conflict(Text("attempts.not_provisional", status=status))
        await log(conn, reviewed)
    await review_attempt(
        pool,
        queue,
        project_id=reviewed.project_id,
        user_id=reviewed.user_id,
        question_id=reviewed.question_id,
        verdict=verdict,
        score=reviewed.score,
        first_try=reviewed.first_try,
        now=now,
    )
    return reviewed

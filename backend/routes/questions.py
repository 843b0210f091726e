"""The question bank: generate (editors), list and read (members), review (editors), and attempts
graded by the Question Evaluator (any member, each seeing only their own attempts)."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, HTTPException, Query, status

from agents.question_evaluator.graph import graph as evaluator
from agents.question_generator.graph import graph as generator
from agents.question_generator.state import QUESTION_TYPES, QuestionType
from backend.audit import AuditDep
from backend.deps import AgentContextDep, ConnDep, ProjectAccess, ProjectDep, ProjectWriterDep
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
    StatusUpdate,
)
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
    body: GenerateRequest, access: ProjectWriterDep, conn: ConnDep, ctx: AgentContextDep, audit: AuditDep
) -> GenerateResponse:
    """Synchronous: about one model call per question (~10 s each on the local 1.5B model), so n ≤ 10.
    Questions below the confidence threshold are stored with status `review`; near-duplicates of the
    bank's questions are not stored and are listed under `rejected`."""
    topic = " ".join(body.section) or None
    if body.document_id is not None:
        document = await documents.get_document(
            conn, project_id=access.id, user_id=access.user.id, document_id=body.document_id
        )
        if document is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "Document not found.")
        topic = topic or document["title"]
    try:
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
        conn,
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
    saved = [QuestionOut.from_row(row, with_answers=True) for row in result["saved"]]
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
    conn: ConnDep,
    status_: Annotated[QuestionStatus | None, Query(alias="status")] = None,
    type: QuestionType | None = None,
    document_id: UUID | None = None,
    difficulty: Difficulty | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[QuestionOut]:
    """Viewers see active questions only, without answers; editors see every status (default: all)."""
    editor = _is_editor(access)
    allowed = ["active", "review", "archived"] if editor else ["active"]
    statuses = [s for s in allowed if status_ is None or s == status_]
    rows = await questions.list_questions(
        conn,
        project_id=access.id,
        user_id=access.user.id,
        statuses=statuses,
        type=type,
        document_id=document_id,
        difficulty=difficulty,
        limit=limit,
        offset=offset,
    )
    return [QuestionOut.from_row(row, with_answers=editor) for row in rows]


async def _visible_question(conn: ConnDep, access: ProjectAccess, question_id: UUID) -> dict:
    row = await questions.get_question(
        conn, project_id=access.id, user_id=access.user.id, question_id=question_id
    )
    if row is None or (row["status"] != "active" and not _is_editor(access)):
        raise _not_found()
    return row


@router.get("/questions/{question_id}")
async def get_question(question_id: UUID, access: ProjectDep, conn: ConnDep) -> QuestionOut:
    row = await _visible_question(conn, access, question_id)
    return QuestionOut.from_row(row, with_answers=_is_editor(access))


@router.patch("/questions/{question_id}")
async def update_question_status(
    question_id: UUID, body: StatusUpdate, access: ProjectWriterDep, conn: ConnDep
) -> QuestionOut:
    """Review: promote a `review` question to `active`, or `archived` to take it out of the bank."""
    row = await questions.set_status(
        conn, project_id=access.id, user_id=access.user.id, question_id=question_id, status=body.status
    )
    if row is None:
        raise _not_found()
    return QuestionOut.from_row(row, with_answers=True)


@router.post("/questions/{question_id}/attempts", status_code=status.HTTP_201_CREATED)
async def attempt_question(
    question_id: UUID,
    body: AttemptCreate,
    access: ProjectDep,
    conn: ConnDep,
    ctx: AgentContextDep,
    audit: AuditDep,
) -> AttemptResult:
    """Grades the answer (exactly, when it names a multiple-choice option; otherwise with the model
    against the reference answer and up to five chunks of the question's document) and stores it."""
    question = await _visible_question(conn, access, question_id)
    try:
        grade = await evaluator.ainvoke(
            {"question": question, "answer": body.answer}, config=audit.run_config(), context=ctx
        )
    except StructuredOutputError as error:
        await audit.record_failure(
            conn, access, error, agent="evaluator", question=question["question"], ctx=ctx
        )
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, f"The model did not produce a grade: {error}"
        ) from error
    row = await attempts.insert_attempt(
        conn,
        project_id=access.id,
        user_id=access.user.id,
        question_id=question_id,
        answer=body.answer,
        score=grade["score"],
        verdict=grade["verdict"],
        feedback=grade["feedback"],
        missing_points=grade["missing_points"],
        citations=[c.model_dump() for c in grade["citations"]],
        graded_by=grade["graded_by"],
    )
    if row is None:  # the question was deleted with its project meanwhile
        raise _not_found()
    # The student's answer is theirs (their attempts hold it); the audit row keeps the grade's feedback.
    cited = [c.chunk_id for c in grade["citations"]]
    await audit.record(
        conn,
        access,
        agent="evaluator",
        question=question["question"],
        answer=grade["feedback"],
        outcome=grade["verdict"],
        retrieved=[c.chunk_id for c in grade.get("retrieved", [])] or cited,
        cited=cited,
        timings_ms=ctx.timings_ms,
        tokens=ctx.usage.by_model,
        question_id=str(question_id),
        attempt_id=str(row["id"]),
        graded_by=grade["graded_by"],
    )
    return AttemptResult(
        **row,
        reference_answer=question["answer"],
        explanation=question["explanation"],
        timings_ms={k: round(v, 1) for k, v in ctx.timings_ms.items()},
        usage=ctx.usage.by_model,
    )


@router.get("/questions/{question_id}/attempts")
async def list_attempts(
    question_id: UUID,
    access: ProjectDep,
    conn: ConnDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[AttemptOut]:
    """The caller's own attempts, newest first."""
    await _visible_question(conn, access, question_id)
    rows = await attempts.list_attempts(
        conn,
        project_id=access.id,
        user_id=access.user.id,
        question_id=question_id,
        limit=limit,
        offset=offset,
    )
    return [AttemptOut(**row) for row in rows]

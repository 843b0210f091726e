"""Content Planner (outlines, answered at once) and Content Writer (notes, written by a worker job)."""

import logging
from typing import Annotated
from uuid import UUID

import openai
from fastapi import APIRouter, HTTPException, Path, Query, status

from agents.planner.graph import graph as planner_graph
from agents.planner.graph import planner_input
from agents.planner.state import outline_document
from backend.admission import MODEL_DOWN_RETRY_AFTER_S, AdmissionDep
from backend.audit import AuditDep
from backend.deps import AgentContextDep, DbDep, ProjectDep, ProjectWriterDep, QueueDep
from backend.plan_schemas import NoteAccepted, NoteJobOut, NoteRequest, PlanOut, PlanRequest
from core.queue import AGENT_QUEUE, WRITE_NOTE
from core.store import jobs, notes, plans
from core.structured import StructuredOutputError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/projects/{project_id}", tags=["plans"])


def _viewer() -> HTTPException:
    return HTTPException(status.HTTP_403_FORBIDDEN, "Viewers cannot change this project.")


@router.post("/plans", status_code=status.HTTP_201_CREATED)
async def create_plan(
    body: PlanRequest,
    access: ProjectWriterDep,
    agent: AgentContextDep,
    db: DbDep,
    audit: AuditDep,
    admission: AdmissionDep,
) -> PlanOut:
    """An outline of sections, each with its supporting chunks and a coverage figure, and the gaps."""
    headings: list[str] = []
    if not body.topic:
        async with db.connection() as conn:
            headings = await plans.project_headings(conn, project_id=access.id, user_id=access.user.id)
    planned = planner_input(body.topic, headings, body.max_sections)
    # An empty question in the history is a plan of the whole project (its query is made of headings).
    asked = {"agent": "planner", "question": body.topic or ""}
    try:
        async with admission.slot(user=str(access.user.id)):  # its turn at the chat model (429 if full)
            output = await planner_graph.ainvoke(planned, config=audit.run_config(), context=agent)
    except StructuredOutputError as error:
        await audit.record_failure(access, error, **asked, ctx=agent)
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, "The chat model's reply could not be read as an outline; try again."
        ) from error
    except (openai.APIConnectionError, openai.APITimeoutError) as error:
        await audit.record_failure(access, error, **asked, ctx=agent)
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "The chat model could not be reached; try again shortly.",
            headers={"Retry-After": str(MODEL_DOWN_RETRY_AFTER_S)},
        ) from error
    async with db.connection() as conn:
        row = await plans.create_plan(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            topic=body.topic,
            outline=outline_document(planned["query"], output),
        )
    if row is None:
        raise _viewer()
    await audit.record(
        access,
        **asked,
        answer="\n".join(section.title for section in output["sections"]),
        outcome="planned",
        retrieved=[c.chunk_id for c in output["retrieved"]],
        cited=list(dict.fromkeys(i for section in output["sections"] for i in section.chunk_ids)),
        timings_ms=agent.timings_ms,
        tokens=agent.usage.by_model,
        plan_id=str(row.id),
        sections=len(output["sections"]),
        gaps=len(output["gaps"]),
    )
    return PlanOut.from_plan(row, agent.timings_ms)


@router.get("/plans")
async def list_plans(
    access: ProjectDep,
    db: DbDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[PlanOut]:
    """The project's plans, newest first, a page at a time."""
    async with db.connection() as conn:
        rows = await plans.list_plans(
            conn, project_id=access.id, user_id=access.user.id, limit=limit, offset=offset
        )
    return [PlanOut.from_plan(row) for row in rows]


@router.get("/plans/{plan_id}")
async def get_plan(plan_id: UUID, access: ProjectDep, db: DbDep) -> PlanOut:
    async with db.connection() as conn:
        row = await plans.get_plan(conn, project_id=access.id, user_id=access.user.id, plan_id=plan_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Plan not found.")
    return PlanOut.from_plan(row)


@router.post("/notes", status_code=status.HTTP_202_ACCEPTED)
async def write_note(
    body: NoteRequest, access: ProjectWriterDep, db: DbDep, queue: QueueDep, audit: AuditDep
) -> NoteAccepted:
    """Queues the writing of a study note (or study guide, FAQ, glossary: `kind`) from a plan, or from
    a topic planned first. The job's progress is at GET /projects/{id}/jobs/{job_id}; the note becomes
    a generated document (as Markdown: GET /projects/{id}/notes/{job_id}/markdown)."""
    request = body.model_dump(mode="json")
    async with db.connection() as conn:
        if body.plan_id is not None:
            plan = await plans.get_plan(
                conn, project_id=access.id, user_id=access.user.id, plan_id=body.plan_id
            )
            if plan is None:
                raise HTTPException(status.HTTP_404_NOT_FOUND, "Plan not found.")
        job = await notes.create_note_job(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            job_id=notes.new_note_job_id(),
            request=request,
        )
    if job is None:
        raise _viewer()
    try:
        await queue.enqueue_job(
            WRITE_NOTE,
            str(access.id),
            str(access.user.id),
            job.id,
            request["plan_id"],
            body.topic,
            body.max_sections,
            kind=body.kind,
            _job_id=job.id,
            _queue_name=AGENT_QUEUE,
        )
    except Exception as error:  # Redis down: say so, and leave no job that looks like it will run
        log.error("could not enqueue %s: %r", job.id, error)
        reason = "The job queue is unavailable, so the note could not be started; try again later."
        async with db.connection() as conn:
            await jobs.fail_job(conn, project_id=access.id, job_id=job.id, error=reason)
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, reason) from error
    # The writer runs in the worker: its row records the request (plan or topic) and the job id; the
    # job's own timings and tokens are in its result (GET /notes/{job_id}).
    await audit.record(
        access,
        agent="writer",
        question=body.topic or (f"plan {body.plan_id}" if body.plan_id else ""),
        outcome="queued",
        timings_ms={"enqueue": audit.elapsed_ms()},
        job_id=job.id,
    )
    return NoteAccepted(job_id=job.id, status=job.status, plan_id=body.plan_id)


@router.get("/notes/{job_id}")
async def get_note_job(
    job_id: Annotated[str, Path(max_length=200)], access: ProjectDep, db: DbDep
) -> NoteJobOut:
    async with db.connection() as conn:
        row = await notes.get_note_job(conn, project_id=access.id, user_id=access.user.id, job_id=job_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Note job not found.")
    return NoteJobOut.model_validate(row)

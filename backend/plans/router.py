"""Content Planner (outlines, answered at once) and Content Writer (notes, written by a worker job)."""

import logging
from typing import Annotated
from uuid import UUID

from arq.connections import ArqRedis
from fastapi import APIRouter, HTTPException, Path, status
from psycopg_pool import AsyncConnectionPool

from agents.runs.planning import plan
from backend.deps import DbDep, ProjectAccess, ProjectDep, ProjectWriterDep, QueueDep
from backend.plans.schemas import NoteAccepted, NoteJobOut, NoteRequest, PlanOut, PlanRequest
from backend.web.agent_runs import RunnerDep
from backend.web.paging import PageDep
from backend.web.run_audit import RunAuditDep
from core.jobs.specs import WRITE_NOTE, WriteNote, enqueue
from core.messages import Text
from core.store.runs import jobs, notes, plans
from core.store.runs.history import RunRecord

log = logging.getLogger(__name__)
router = APIRouter(prefix="/projects/{project_id}", tags=["plans"])


def _viewer() -> HTTPException:
    return HTTPException(status.HTTP_403_FORBIDDEN, Text("project.viewers_cannot_change"))


@router.post("/plans", status_code=status.HTTP_201_CREATED)
async def create_plan(body: PlanRequest, access: ProjectWriterDep, runner: RunnerDep, db: DbDep) -> PlanOut:
    """An outline of sections, each with its supporting chunks and a coverage figure, and the gaps."""
    row = await plan(runner, db, topic=body.topic, max_sections=body.max_sections)
    return PlanOut.from_plan(row, runner.context.timings_ms)


@router.get("/plans")
async def list_plans(access: ProjectDep, db: DbDep, page: PageDep) -> list[PlanOut]:
    """The project's plans, newest first, a page at a time."""
    async with db.connection() as conn:
        rows = await plans.list_plans(conn, **access.scope, page=page)
    return [PlanOut.from_plan(row) for row in rows]


@router.get("/plans/{plan_id}")
async def get_plan(plan_id: UUID, access: ProjectDep, db: DbDep) -> PlanOut:
    async with db.connection() as conn:
        row = await plans.get_plan(conn, **access.scope, plan_id=plan_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("plan.not_found"))
    return PlanOut.from_plan(row)


@router.post("/notes", status_code=status.HTTP_202_ACCEPTED)
async def write_note(
    body: NoteRequest, access: ProjectWriterDep, db: DbDep, queue: QueueDep, audit: RunAuditDep
) -> NoteAccepted:
    """Queues the writing of a study note (or study guide, FAQ, glossary: `kind`) from a plan, or from
    a topic planned first. The job's progress is at GET /projects/{id}/jobs/{job_id}; the note becomes
    a generated document (as Markdown: GET /projects/{id}/notes/{job_id}/markdown)."""
    async with db.connection() as conn:
        if body.plan_id is not None:
            plan = await plans.get_plan(conn, **access.scope, plan_id=body.plan_id)
            if plan is None:
                raise HTTPException(status.HTTP_404_NOT_FOUND, Text("plan.not_found"))
        job = await notes.create_note_job(
            conn, **access.scope, job_id=notes.new_note_job_id(), request=body.model_dump(mode="json")
        )
    if job is None:
        raise _viewer()
    await _enqueue_note(queue, db, access, job.id, body)
    # The writer runs in the worker: its row records the request (plan or topic) and the job id; the
    # job's own timings and tokens are in its result (GET /notes/{job_id}).
    question = body.topic or (f"plan {body.plan_id}" if body.plan_id else "")
    run = RunRecord("writer", question, outcome="queued", timings_ms={"enqueue": audit.elapsed_ms()})
    await audit.record(access, run, job_id=job.id)
    return NoteAccepted(job_id=job.id, status=job.status, plan_id=body.plan_id)


async def _enqueue_note(
    queue: ArqRedis, db: AsyncConnectionPool, access: ProjectAccess, job_id: str, body: NoteRequest
) -> None:
    try:
        ids = (access.id, access.user.id, job_id)
        note = WriteNote(*ids, body.plan_id, body.topic, body.max_sections, body.kind)
        await enqueue(queue, WRITE_NOTE, note)
    except Exception as error:  # Redis down: say so, and leave no job that looks like it will run
        log.error("could not enqueue %s: %r", job_id, error)
        reason = Text("note.queue_unavailable")
        async with db.connection() as conn:
            await jobs.fail_job(conn, project_id=access.id, job_id=job_id, error=reason)
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, reason) from error


@router.get("/notes/{job_id}")
async def get_note_job(
    job_id: Annotated[str, Path(max_length=200)], access: ProjectDep, db: DbDep
) -> NoteJobOut:
    async with db.connection() as conn:
        row = await notes.get_note_job(conn, **access.scope, job_id=job_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("note.job_not_found"))
    return NoteJobOut.model_validate(row)

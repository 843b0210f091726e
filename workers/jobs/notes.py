"""The note job, which runs the planner and writer agents: plan (when given a topic), write the note (or
study guide, FAQ, glossary: its kind) section by section, save it as a generated document and queue its
indexing, so it becomes searchable like an upload."""

import hashlib
import logging
import re
from typing import Any

from arq.connections import ArqRedis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from agents.common.context import AgentContext
from agents.planner.config import DEFAULT_SECTIONS
from agents.planner.graph import graph as planner_graph
from agents.planner.graph import planner_input
from agents.planner.state import PlanGap, PlanSection, outline_document
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.specs import WRITER
from agents.writer.graph import graph as writer_graph
from agents.writer.kinds import SPECS
from agents.writer.state import WriterInput
from core.jobs.specs import INDEX_DOCUMENT, WRITE_NOTE, IndexDocument, WriteNote, enqueue
from core.runtime import Runtime
from core.settings import Settings
from core.store.accounts import projects
from core.store.accounts.projects import Project
from core.store.content import documents
from core.store.content.documents import Document
from core.store.runs import jobs, notes, plans
from core.store.runs.plans import Plan
from workers.jobs.agent_runs import background_runner
from workers.jobs.framework import Failure, JobAbandoned, Result, TrackedJob

log = logging.getLogger(__name__)


class WriteNoteJob(TrackedJob[WriteNote]):
    spec = WRITE_NOTE
    timeout_reason = "The note took longer than {limit_s:g} s and was stopped."
    died_reason = "The worker died while writing this note, every time it was tried."

    def time_limit_s(self, settings: Settings) -> float:
        return settings.workers.note_job_timeout_s

    async def start(self, conn: AsyncConnection[Any], args: WriteNote) -> int | Result:
        stage = "planning" if args.plan_id is None else "loading"
        deaths = await notes.start_note_job(conn, stage=stage, project_id=args.project_id, job_id=args.job_id)
        if deaths is None:
            # Already written (a rerun after a lost acknowledgement) or unknown: never write it twice.
            done = await notes.finished_result(conn, project_id=args.project_id, job_id=args.job_id)
            return {"status": "succeeded", **done} if done else {"status": "failed", "error": "unknown job"}
        return deaths

    def known_failure(self, error: Exception) -> Failure | None:
        if isinstance(error, UnusableReply):
            return Failure(f"The chat model's outline could not be read: {str(error)[:300]}")
        if isinstance(error, ModelUnreachable):
            cause = type(error.__cause__).__name__
            return Failure(f"The chat model could not be reached ({cause}); try again later.")
        return None

    def unforeseen_failure(self, error: Exception) -> Failure:  # a bug or a model reply nobody foresaw
        return Failure(f"The note could not be written ({type(error).__name__}).")

    async def run(self, runtime: Runtime, args: WriteNote) -> Result:
        if runtime.llm is None:
            raise JobAbandoned(
                "No chat model is configured for the worker: set LLM_BASE_URL, or run `studyai up`"
                " (which starts the local one)."
            )
        project, plan = await _load(runtime.pool, args)
        runner = await background_runner(
            runtime, runtime.llm, project_id=args.project_id, user_id=args.user_id, language=project.language
        )
        return await runner.call(
            WRITER, lambda admitted: _write(runtime, admitted, args, project, plan), question=args.topic or ""
        )


# One attempt within NOTE_JOB_TIMEOUT_S, in the jobs row's lifecycle (workers/jobs/framework.py). A
# finished note is never rewritten (notes.start_note_job), so a rerun after a death is safe.
write_note = WriteNoteJob()


async def _load(pool: AsyncConnectionPool, args: WriteNote) -> tuple[Project, Plan | None]:
    """The project, and the plan to write from (None: the job plans its topic first)."""
    scope = {"project_id": args.project_id, "user_id": args.user_id}
    async with pool.connection() as conn:
        project = await projects.get_project(conn, **scope)
        if project is None:
            raise JobAbandoned("The project no longer exists, or the user is no longer a member of it.")
        if args.plan_id is None:
            return project, None
        plan = await plans.get_plan(conn, **scope, plan_id=args.plan_id)
        if plan is None:
            raise JobAbandoned("The plan was not found in this project.")
    return project, plan


async def _write(
    runtime: Runtime, agent: AgentContext, args: WriteNote, project: Project, plan: Plan | None
) -> Result:
    pool = runtime.pool
    project_id, user_id, kind = args.project_id, args.user_id, args.kind
    ids: dict[str, Any] = {"project_id": project_id, "job_id": args.job_id}
    spec = SPECS[kind]  # a kind the API did not accept is a KeyError: the job fails, the worker lives
    if plan is None:
        planned = planner_input(args.topic, [], args.max_sections or DEFAULT_SECTIONS)
        output = await planner_graph.ainvoke(planned, context=agent)
        async with pool.connection() as conn:
            plan = await plans.create_plan(
                conn,
                project_id=project_id,
                user_id=user_id,
                topic=args.topic,
                outline=outline_document(planned["query"], output),
            )
        if plan is None:
            raise JobAbandoned("The user may no longer write to this project.")

    sections = [PlanSection.model_validate(s) for s in plan.outline["sections"]]
    if not sections:
        raise JobAbandoned("The project's material has nothing on this topic: the plan has no sections.")
    title = f"{spec.title}: {plan.topic or project.name}"[:300]
    gaps = [PlanGap.model_validate(g) for g in plan.outline["gaps"]]
    note = WriterInput(title=title, sections=sections, gaps=gaps, kind=kind)
    markdown, written = await _write_sections(pool, agent, ids, note)

    content = markdown.encode()
    async with pool.connection() as conn:
        await jobs.set_progress(conn, stage="saving", done=len(sections), total=len(sections), **ids)
        async with conn.transaction():  # the document and the job's success, or neither
            document = await documents.create_document(
                conn,
                project_id=project_id,
                user_id=user_id,
                title=title,
                filename=f"{spec.filename}-{_slug(plan.topic or project.name)}.md",
                source_type="markdown",
                kind="generated",
                content=content,
                content_hash=hashlib.sha256(content).hexdigest(),
            )
            if document is None:
                raise JobAbandoned("The user may no longer write to this project.")
            result = {
                "document_id": str(document.id),
                "plan_id": str(plan.id),
                "title": title,
                "kind": kind,
                "sections": written,
                "dropped_citations": sum(len(w["dropped_citations"]) for w in written),
                "usage": agent.usage.by_model,
                "timings_ms": agent.timings_ms,
            }
            await notes.finish_note_job(conn, document_id=document.id, result=result, **ids)
    await _enqueue_index(runtime.redis, document)
    return {"status": "succeeded", **result}


async def _write_sections(
    pool: AsyncConnectionPool, agent: AgentContext, ids: dict[str, Any], note: WriterInput
) -> tuple[str, list[dict[str, Any]]]:
    """Runs the writer graph, reporting each finished section as progress."""
    total, done = len(note["sections"]), 0
    async with pool.connection() as conn:
        await jobs.set_progress(conn, stage="writing", done=0, total=total, **ids)
    final: dict[str, Any] = {}
    async for mode, update in writer_graph.astream(note, context=agent, stream_mode=["updates", "values"]):
        if mode == "values":
            final = update
        elif "write_section" in update:
            done += 1
            async with pool.connection() as conn:
                await jobs.set_progress(conn, stage="writing", done=done, total=total, **ids)
    written = [
        w.model_dump(exclude={"body", "sources"}) | {"sources": [s.chunk_id for s in w.sources]}
        for w in final["written"]
    ]
    return final["markdown"], written


async def _enqueue_index(redis: ArqRedis, document: Document) -> None:
    args = IndexDocument(document.project_id, document.id, document.version)
    try:
        await enqueue(redis, INDEX_DOCUMENT, args)
    except Exception as error:  # its job row stays queued; the next worker start enqueues it again
        log.warning("could not enqueue %s for a written note: %r", INDEX_DOCUMENT.job_id(args), error)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "note"

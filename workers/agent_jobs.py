"""arq jobs that run an agent. write_note: plan (when given a topic), write the note (or study guide,
FAQ, glossary: its kind) section by section, save it as a generated document and queue its indexing,
so it becomes searchable like an upload."""

import asyncio
import hashlib
import logging
import re
from typing import Any
from uuid import UUID

import openai
from langchain_core.language_models import BaseChatModel

from agents.common.context import AgentContext
from agents.common.plan import PlanGap, PlanSection
from agents.planner.config import DEFAULT_SECTIONS
from agents.planner.graph import graph as planner_graph
from agents.planner.graph import planner_input
from agents.planner.state import outline_document
from agents.writer.graph import graph as writer_graph
from agents.writer.kinds import SPECS, Kind
from agents.writer.state import WriterInput
from core.calibration import thresholds_of
from core.llm import structured_mode
from core.queue import INDEX_DOCUMENT, INDEX_QUEUE
from core.retrieval import RetrievalConfig, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.store import documents, jobs, notes, plans, projects
from core.store.jobs import index_job_id
from core.structured import StructuredOutputError
from workers.admission import admitted_llm
from workers.quarantine import Quarantine

log = logging.getLogger(__name__)


class NoteAbandoned(Exception):
    """The note cannot be written; the message is the reason shown to the user."""


def retriever_for(ctx: dict[str, Any]) -> Retriever:
    """Built once per worker from what start-up opened, then kept in ctx."""
    if "retriever" not in ctx:
        settings = ctx["settings"]
        ctx["retriever"] = Retriever(
            ctx["pool"], ctx["embeddings"], make_reranker(settings), RetrievalConfig.from_settings(settings)
        )
    return ctx["retriever"]


async def write_note(
    ctx: dict[str, Any],
    project_id: str,
    user_id: str,
    note_job_id: str,
    plan_id: str | None = None,
    topic: str | None = None,
    max_sections: int = DEFAULT_SECTIONS,
    kind: Kind = "note",
) -> dict[str, Any]:
    """One attempt within NOTE_JOB_TIMEOUT_S; a job whose worker died under it before runs alone
    (workers/quarantine.py), and one that a graceful stop cancels goes back to `queued`."""
    pool, settings = ctx["pool"], ctx["settings"]
    ids = {"project_id": project_id, "job_id": note_job_id}
    async with pool.connection() as conn:
        state = await jobs.attempt_state(conn, **ids)
    suspect = state is not None and (state["status"] == "running" or state["deaths"] > 0)
    quarantine: Quarantine = ctx.get("quarantine") or Quarantine()
    try:
        # The limit covers a suspect's wait too: arq's own timeout, later, would leave the row running.
        async with asyncio.timeout(settings.note_job_timeout_s), quarantine.hold(alone=suspect):
            return await _attempt(ctx, project_id, user_id, note_job_id, plan_id, topic, max_sections, kind)
    except TimeoutError:  # our limit; _attempt turns a model call's own timeout into a reason
        reason = f"The note took longer than {settings.note_job_timeout_s:g} s and was stopped."
    except asyncio.CancelledError:  # the worker is stopping: arq reruns the job; this is no death
        await asyncio.shield(_requeue(pool, ids))
        raise
    async with pool.connection() as conn:
        await jobs.fail_job(conn, error=reason, **ids)
    return {"status": "failed", "error": reason}


async def _attempt(
    ctx: dict[str, Any],
    project_id: str,
    user_id: str,
    note_job_id: str,
    plan_id: str | None,
    topic: str | None,
    max_sections: int,
    kind: Kind,
) -> dict[str, Any]:
    pool = ctx["pool"]
    ids = {"project_id": project_id, "job_id": note_job_id}
    async with pool.connection() as conn:
        deaths = await notes.start_note_job(conn, stage="planning" if plan_id is None else "loading", **ids)
        if deaths is None:
            # Already written (a rerun after a lost acknowledgement) or unknown: never write it twice.
            done = await notes.finished_result(conn, **ids)
            return {"status": "succeeded", **done} if done else {"status": "failed", "error": "unknown job"}
    try:
        if deaths >= ctx["settings"].job_max_deaths:
            raise NoteAbandoned("The worker died while writing this note, every time it was tried.")
        if ctx.get("llm") is None:
            raise NoteAbandoned(
                "No chat model is configured for the worker: set LLM_BASE_URL, or run `studyai up`"
                " (which starts the local one)."
            )
        # Each model call waits its turn in the shared queue, behind the API's interactive requests.
        async with admitted_llm(ctx, user=user_id) as llm:
            request = (plan_id, topic, max_sections, kind)
            return await _write(ctx, llm, project_id, user_id, note_job_id, *request)
    except NoteAbandoned as error:
        reason = str(error)
    except StructuredOutputError as error:
        reason = f"The chat model's outline could not be read: {str(error)[:300]}"
    except (openai.APIConnectionError, openai.APITimeoutError) as error:
        reason = f"The chat model could not be reached ({type(error).__name__}); try again later."
    except Exception as error:  # a bug or a model reply nobody foresaw: fail this job, keep the worker
        log.exception("note job %s failed", note_job_id)
        reason = f"The note could not be written ({type(error).__name__})."
    async with pool.connection() as conn:
        await jobs.fail_job(conn, error=reason, **ids)
    return {"status": "failed", "error": reason}


async def _write(
    ctx: dict[str, Any],
    llm: BaseChatModel,
    project_id: str,
    user_id: str,
    job_id: str,
    plan_id: str | None,
    topic: str | None,
    max_sections: int,
    kind: Kind,
) -> dict[str, Any]:
    pool = ctx["pool"]
    ids = {"project_id": project_id, "job_id": job_id}
    spec = SPECS[kind]  # a kind the API did not accept is a KeyError: the job fails, the worker lives
    async with pool.connection() as conn:
        project = await projects.get_project(conn, project_id=project_id, user_id=user_id)
        if project is None:
            raise NoteAbandoned("The project no longer exists, or the user is no longer a member of it.")
        plan = None
        if plan_id is not None:
            plan = await plans.get_plan(conn, project_id=project_id, user_id=user_id, plan_id=plan_id)
            if plan is None:
                raise NoteAbandoned("The plan was not found in this project.")
    agent = AgentContext(
        project_id=UUID(project_id),
        user_id=UUID(user_id),
        retriever=retriever_for(ctx),
        llm=llm,
        structured_mode=structured_mode(ctx["settings"]),
        language=project["language"],
        thresholds=thresholds_of(ctx),
    )
    if plan is None:
        planned = planner_input(topic, [], max_sections)
        output = await planner_graph.ainvoke(planned, context=agent)
        async with pool.connection() as conn:
            plan = await plans.create_plan(
                conn,
                project_id=project_id,
                user_id=user_id,
                topic=topic,
                outline=outline_document(planned["query"], output),
            )
        if plan is None:
            raise NoteAbandoned("The user may no longer write to this project.")

    sections = [PlanSection.model_validate(s) for s in plan["outline"]["sections"]]
    if not sections:
        raise NoteAbandoned("The project's material has nothing on this topic: the plan has no sections.")
    title = f"{spec.title}: {plan['topic'] or project['name']}"[:300]
    gaps = [PlanGap.model_validate(g) for g in plan["outline"]["gaps"]]
    note = WriterInput(title=title, sections=sections, gaps=gaps, kind=kind)
    markdown, written = await _write_sections(ctx, agent, ids, note)

    content = markdown.encode()
    async with pool.connection() as conn:
        await jobs.set_progress(conn, stage="saving", done=len(sections), total=len(sections), **ids)
        async with conn.transaction():  # the document and the job's success, or neither
            document = await documents.create_document(
                conn,
                project_id=project_id,
                user_id=user_id,
                title=title,
                filename=f"{spec.filename}-{_slug(plan['topic'] or project['name'])}.md",
                source_type="markdown",
                kind="generated",
                content=content,
                content_hash=hashlib.sha256(content).hexdigest(),
            )
            if document is None:
                raise NoteAbandoned("The user may no longer write to this project.")
            result = {
                "document_id": str(document["id"]),
                "plan_id": str(plan["id"]),
                "title": title,
                "kind": kind,
                "sections": written,
                "dropped_citations": sum(len(w["dropped_citations"]) for w in written),
                "usage": agent.usage.by_model,
                "timings_ms": agent.timings_ms,
            }
            await notes.finish_note_job(conn, document_id=document["id"], result=result, **ids)
    await _enqueue_index(ctx, document)
    return {"status": "succeeded", **result}


async def _write_sections(
    ctx: dict[str, Any], agent: AgentContext, ids: dict[str, str], note: WriterInput
) -> tuple[str, list[dict[str, Any]]]:
    """Runs the writer graph, reporting each finished section as progress."""
    total, done = len(note["sections"]), 0
    async with ctx["pool"].connection() as conn:
        await jobs.set_progress(conn, stage="writing", done=0, total=total, **ids)
    final: dict[str, Any] = {}
    async for mode, update in writer_graph.astream(note, context=agent, stream_mode=["updates", "values"]):
        if mode == "values":
            final = update
        elif "write_section" in update:
            done += 1
            async with ctx["pool"].connection() as conn:
                await jobs.set_progress(conn, stage="writing", done=done, total=total, **ids)
    written = [
        w.model_dump(exclude={"body", "sources"}) | {"sources": [s.chunk_id for s in w.sources]}
        for w in final["written"]
    ]
    return final["markdown"], written


async def _requeue(pool: Any, ids: dict[str, str]) -> None:
    try:
        async with pool.connection() as conn:
            await jobs.requeue_job(conn, **ids)
    except Exception as error:  # the database is what failed: the next start counts a death, at worst
        log.warning("could not mark %s queued again: %r", ids["job_id"], error)


async def _enqueue_index(ctx: dict[str, Any], document: dict[str, Any]) -> None:
    job_id = index_job_id(document["id"], document["version"])
    try:
        await ctx["redis"].enqueue_job(
            INDEX_DOCUMENT,
            str(document["project_id"]),
            str(document["id"]),
            document["version"],
            _job_id=job_id,
            _queue_name=INDEX_QUEUE,
        )
    except Exception as error:  # its job row stays queued; the next worker start enqueues it again
        log.warning("could not enqueue %s for a written note: %r", job_id, error)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "note"

"""The arq workers: `python -m workers [--queue index|agents|all]`.

Two queues (core/queue.py), each served by its own arq Worker, so indexing never waits behind a note
of several model minutes. With `all` both Workers run in one process and one event loop and share what
start-up opened (the pool, the embedding model, the chat model); SIGTERM or SIGINT stops both. Running
jobs hold short leases renewed while they run (workers/leases.py): a killed worker's jobs run again."""

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from arq.connections import RedisSettings
from arq.cron import cron
from arq.worker import func

from agents.planner.config import DEFAULT_SECTIONS
from core.calibration import thresholds_for
from core.db import open_pool
from core.embeddings import make_embeddings
from core.llm import make_chat_model
from core.migrations import apply_migrations
from core.queue import (
    AGENT_QUEUE,
    INDEX_DOCUMENT,
    INDEX_QUEUE,
    JUDGE_ANSWER,
    OPTIMIZE_STUDY,
    PURGE_QUERY_HISTORY,
    WRITE_NOTE,
)
from core.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.jobs import unfinished_jobs
from core.tracing import Tracing
from workers.agent_jobs import write_note
from workers.jobs import index_document
from workers.judge_jobs import judge_answer_job, purge_query_history
from workers.leases import LeasedWorker
from workers.quarantine import Quarantine
from workers.study_jobs import optimize_study_parameters

log = logging.getLogger(__name__)

Queue = Literal["index", "agents"]
QUEUES: tuple[Queue, ...] = ("index", "agents")
QUEUE_NAMES: dict[Queue, str] = {"index": INDEX_QUEUE, "agents": AGENT_QUEUE}
# arq's own try counter also counts restarts after a death or a graceful stop; past max_tries arq drops
# a job without calling it, which would leave its jobs row `running`. So arq's limit is only a backstop:
# the jobs table decides (JOB_MAX_TRIES for transient errors, JOB_MAX_DEATHS for deaths).
ARQ_MAX_TRIES = 100
# arq's timeout is a backstop too: the job's own limit (INDEX_/NOTE_JOB_TIMEOUT_S) fires first and
# records the reason, while arq's cancellation would leave the row `running`.
ARQ_TIMEOUT_MARGIN_S = 60.0


@contextlib.asynccontextmanager
async def open_resources(
    settings: Settings, urls: ServiceUrls, *, queues: Sequence[Queue] = QUEUES
) -> AsyncIterator[dict[str, Any]]:
    """What jobs use, opened once per process and shared by its Workers (each gets a copy of the dict:
    arq adds its own Redis pool to it)."""
    pool = await open_pool(urls.database_url, max_size=4 * len(queues))
    tracing = Tracing.from_settings(settings)  # LangSmith feedback on judged runs, when configured
    try:
        yield {
            "settings": settings,
            "pool": pool,
            "embeddings": await asyncio.to_thread(make_embeddings, settings),
            "thresholds": thresholds_for(settings.embedding_model, settings.data_dir),
            # Agent jobs (notes, groundedness) need the chat model; indexing does not.
            "llm": make_chat_model(settings, base_url=urls.llm_base_url) if urls.llm_base_url else None,
            "tracing": tracing,
            "quarantine": Quarantine(),  # one per process: a suspect job runs alone in it
        }
    finally:
        if tracing is not None:
            await asyncio.to_thread(tracing.flush)
        await pool.close()


def build_worker(
    settings: Settings,
    urls: ServiceUrls,
    *,
    queue: Queue = "index",
    ctx: dict[str, Any] | None = None,
    **overrides: Any,
) -> LeasedWorker:
    """The Worker of one queue; `ctx` is what open_resources yielded (jobs fail without it)."""

    async def on_startup(worker_ctx: dict[str, Any]) -> None:
        await _requeue_unfinished(worker_ctx, queue)

    if queue == "index":
        functions = [
            func(
                index_document,
                name=INDEX_DOCUMENT,
                max_tries=ARQ_MAX_TRIES,
                timeout=settings.index_job_timeout_s + ARQ_TIMEOUT_MARGIN_S,
            ),
            # A student's FSRS fit: CPU seconds, not model-bound (workers/study_jobs.py).
            func(optimize_study_parameters, name=OPTIMIZE_STUDY, max_tries=2),
        ]
        # The retention window, hourly and once when the worker starts; unique: one worker runs it.
        # Quick SQL, so it lives on the index queue, which every deployment runs.
        cron_jobs = [
            cron(purge_query_history, name=PURGE_QUERY_HISTORY, minute=17, run_at_startup=True, unique=True)
        ]
    else:
        functions = [
            # A finished note is never rewritten (notes.start_note_job), so a rerun after a death is safe.
            func(
                write_note,
                name=WRITE_NOTE,
                max_tries=ARQ_MAX_TRIES,
                timeout=settings.note_job_timeout_s + ARQ_TIMEOUT_MARGIN_S,
            ),
            # A worker that died mid-judgement reruns it once; the evaluation is written at most once.
            func(judge_answer_job, name=JUDGE_ANSWER, max_tries=2),
        ]
        cron_jobs = []
    options: dict[str, Any] = {
        "functions": functions,
        "cron_jobs": cron_jobs,
        "redis_settings": RedisSettings.from_dsn(urls.redis_url),
        "queue_name": QUEUE_NAMES[queue],
        "ctx": dict(ctx or {}),
        "on_startup": on_startup,
        "max_jobs": settings.worker_max_jobs,
        "poll_delay": settings.worker_poll_delay,
        "job_timeout": 3600,
        "keep_result": 3600,
        # `{queue_name}:health-check` lives health_check_interval + 1 s: /health/ready reads it.
        "health_check_interval": settings.worker_health_check_s,
        "handle_signals": False,  # serve() stops every Worker of the process on one signal
        "lease_s": settings.worker_lease_s,
    }
    options.update(overrides)
    return LeasedWorker(**options)


async def _requeue_unfinished(ctx: dict[str, Any], queue: Queue) -> None:
    """A job whose queue entry was lost (e.g. Redis restarted) is found again in the jobs table; the
    same job id makes this a no-op for jobs the queue still holds. Sampled groundedness judgements
    have no jobs row: one lost with Redis stays lost (it is a sample)."""
    async with ctx["pool"].connection() as conn:
        pending = await unfinished_jobs(conn, kind="index" if queue == "index" else "write_note")
    for job in pending:
        if queue == "index":
            await ctx["redis"].enqueue_job(
                INDEX_DOCUMENT,
                str(job.project_id),
                str(job.document_id),
                job.document_version,
                _job_id=job.id,
                _queue_name=INDEX_QUEUE,
            )
            continue
        request = (job.result or {}).get("request") or {}
        if job.created_by is None:  # queued before migration 0010 recorded who asked
            log.warning("note job %s cannot be queued again: its requester is not recorded", job.id)
            continue
        await ctx["redis"].enqueue_job(
            WRITE_NOTE,
            str(job.project_id),
            str(job.created_by),
            job.id,
            request.get("plan_id"),
            request.get("topic"),
            request.get("max_sections", DEFAULT_SECTIONS),
            kind=request.get("kind", "note"),  # the request as POST /notes stored it
            _job_id=job.id,
            _queue_name=AGENT_QUEUE,
        )


async def serve(settings: Settings, urls: ServiceUrls, queues: Sequence[Queue]) -> int:
    """Runs one Worker per queue until a signal, or until one of them stops on its own (an error: the
    others are stopped too and the exit status says so, for the supervisor to restart the process)."""
    async with open_resources(settings, urls, queues=queues) as resources:
        workers = [build_worker(settings, urls, queue=queue, ctx=resources) for queue in queues]
        tasks = [asyncio.create_task(worker.main(), name=f"worker:{worker.queue_name}") for worker in workers]
        for worker, task in zip(workers, tasks, strict=True):
            worker.main_task = task  # arq's handle_sig cancels it

        stopping: list[signal.Signals] = []

        def stop(signum: signal.Signals) -> None:
            if stopping:
                return
            stopping.append(signum)
            for worker in workers:
                worker.handle_sig(signum)  # cancels its running jobs: they go back to the queue

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop, signum)
        failed = False
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    log.error("worker %s stopped", task.get_name(), exc_info=task.exception())
                    failed = True
            stop(signal.SIGTERM)
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            for worker in workers:
                await worker.close()
    return 1 if failed else 0


def run(settings: Settings, queue: Queue | Literal["all"] = "all") -> int:
    """`python -m workers`: uses DATABASE_URL/REDIS_URL, or starts the embedded services."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    queues = QUEUES if queue == "all" else (queue,)
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        return asyncio.run(serve(settings, urls, queues))

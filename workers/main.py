"""The arq workers: `python -m workers [--queue index|agents|all]`.

Two queues (core/jobs/specs.py), each served by its own arq Worker, so indexing never waits behind a
note of several model minutes. With `all` both Workers run in one process and one event loop and share
its runtime (the pool, the embedding model, the chat model); SIGTERM or SIGINT stops both. Running jobs
hold short leases renewed while they run (workers/jobs/leases.py): a killed worker's jobs run again."""

import asyncio
import logging
import signal
from collections.abc import Sequence
from typing import Any, Literal
from uuid import UUID

from arq.connections import RedisSettings

from agents.planner.config import DEFAULT_SECTIONS
from core.jobs.specs import (
    AUDIO_OVERVIEW,
    INDEX_DOCUMENT,
    JUDGE_ANSWER,
    OPTIMIZE_STUDY,
    QUEUE_NAMES,
    QUEUES,
    WRITE_NOTE,
    IndexDocument,
    JudgeAnswer,
    MakeAudioOverview,
    OptimizeStudy,
    PurgeHistory,
    Queue,
    ScheduledBackup,
    WriteNote,
    enqueue,
)
from core.runtime import Runtime, open_runtime
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.runs.jobs import UnfinishedJob, fail_job, unfinished_jobs
from core.store.sql.migrations import MigrationError, apply_migrations
from workers.jobs.audio import make_audio_overview
from workers.jobs.backup import scheduled_backup
from workers.jobs.framework import WorkerResources, arq_cron
from workers.jobs.index import index_document
from workers.jobs.judge import judge_answer_job, purge_query_history
from workers.jobs.leases import LeasedWorker
from workers.jobs.notes import write_note
from workers.jobs.study import optimize_study_parameters
from workers.liveness import liveness_record

log = logging.getLogger(__name__)

__all__ = ["QUEUES", "Queue", "build_worker", "run", "serve"]


def build_worker(
    settings: Settings,
    urls: ServiceUrls,
    *,
    queue: Queue = "index",
    resources: WorkerResources | None = None,
    **overrides: Any,
) -> LeasedWorker:
    """The Worker of one queue; `resources` is what its jobs run with (they fail without it)."""

    async def on_startup(_: dict[str, Any]) -> None:
        if resources is not None:
            await _requeue_unfinished(resources.runtime, queue)

    if queue == "index":
        functions = [
            index_document.arq_function(settings),
            # A student's FSRS fit: CPU seconds, not model-bound (workers/jobs/study.py).
            optimize_study_parameters.arq_function(settings),
        ]
        # The retention window, hourly and once when the worker starts; unique: one worker runs it.
        # Quick SQL, so it lives on the index queue, which every deployment runs.
        # The backup schedule likewise (hourly; a backup only when due, and only if BACKUP_DIR is set).
        cron_jobs = [
            arq_cron(purge_query_history, PurgeHistory(), minute=17, run_at_startup=True, unique=True),
            arq_cron(scheduled_backup, ScheduledBackup(), minute=47, run_at_startup=True, unique=True),
        ]
    else:
        functions = [
            write_note.arq_function(settings),
            judge_answer_job.arq_function(settings),
            make_audio_overview.arq_function(settings),
        ]
        cron_jobs = []
    options: dict[str, Any] = {
        "functions": functions,
        "cron_jobs": cron_jobs,
        "redis_settings": RedisSettings.from_dsn(urls.redis_url),
        "queue_name": QUEUE_NAMES[queue],
        "ctx": resources.arq_context() if resources is not None else {},
        "on_startup": on_startup,
        "max_jobs": settings.workers.max_jobs,
        "poll_delay": settings.workers.poll_delay,
        "job_timeout": 3600,
        # A job's state and result live in its jobs row; arq's copy only keeps the same job id from being
        # queued twice meanwhile (two index workers' start-up cron), so five minutes are enough, not an
        # hour of every job's result held in Redis.
        "keep_result": 300,
        # `{queue_name}:health-check` lives health_check_interval + 1 s: /health/ready reads it.
        "health_check_interval": settings.workers.health_check_s,
        "handle_signals": False,  # serve() stops every Worker of the process on one signal
        "lease_s": settings.workers.lease_s,
    }
    options.update(overrides)
    return LeasedWorker(**options)


# The jobs rows each queue's Worker enqueues again at its start (core/jobs/specs.py says which queue).
QUEUE_KINDS: dict[Queue, tuple[str, ...]] = {
    "index": ("index", "optimize_study"),
    "agents": ("write_note", "judge", "audio_overview"),
}


UNKNOWN_REQUESTER = (
    "This job was queued before an upgrade and who asked for it is not recorded, so it cannot run again:"
    " ask for it again."
)


async def _requeue_unfinished(runtime: Runtime, queue: Queue) -> None:
    """A job whose queue entry was lost (e.g. Redis restarted) is found again in the jobs table; the
    same job id makes this a no-op for jobs the queue still holds."""
    async with runtime.pool.connection() as conn:
        pending = await unfinished_jobs(conn, kinds=QUEUE_KINDS[queue])
    for job in pending:
        if job.kind == "index":
            args = IndexDocument(job.project_id, job.document_id, job.document_version)
            await enqueue(runtime.redis, INDEX_DOCUMENT, args)
        elif job.created_by is None:  # queued before migration 0010 recorded who asked, or user deleted
            # Ended with the reason rather than left `queued` for ever: whoever asked can ask again.
            async with runtime.pool.connection() as conn:
                await fail_job(conn, project_id=job.project_id, job_id=job.id, error=UNKNOWN_REQUESTER)
            log.warning("%s job %s cannot be queued again: its requester is not recorded", job.kind, job.id)
        elif job.kind == "judge" and job.query_id is not None:
            judge = JudgeAnswer(job.project_id, job.created_by, job.query_id)
            await enqueue(runtime.redis, JUDGE_ANSWER, judge)
        elif job.kind == "optimize_study":
            await enqueue(runtime.redis, OPTIMIZE_STUDY, OptimizeStudy(job.project_id, job.created_by))
        elif job.kind == "write_note":
            await enqueue(runtime.redis, WRITE_NOTE, _note_request(job, job.created_by))
        elif job.kind == "audio_overview":  # its request stays in the row: the id is enough
            overview = MakeAudioOverview(job.project_id, job.created_by, UUID(job.id.removeprefix("audio:")))
            await enqueue(runtime.redis, AUDIO_OVERVIEW, overview)


def _note_request(job: UnfinishedJob, user_id: UUID) -> WriteNote:
    """The request as POST /notes stored it in the row's result."""
    request = (job.result or {}).get("request") or {}
    plan_id = request.get("plan_id")
    return WriteNote(
        project_id=job.project_id,
        user_id=user_id,
        job_id=job.id,
        plan_id=None if plan_id is None else UUID(plan_id),
        topic=request.get("topic"),
        max_sections=request.get("max_sections", DEFAULT_SECTIONS),
        kind=request.get("kind", "note"),
    )


async def serve(settings: Settings, urls: ServiceUrls, queues: Sequence[Queue]) -> int:
    """Runs one Worker per queue until a signal, or until one of them stops on its own (an error: the
    others are stopped too and the exit status says so, for the supervisor to restart the process)."""
    async with open_runtime(settings, urls, pool_size=4 * len(queues), pool_timeout_s=30.0) as runtime:
        resources = WorkerResources(runtime)  # one quarantine per process: a suspect job runs alone in it
        workers = [build_worker(settings, urls, queue=queue, resources=resources) for queue in queues]
        names = [QUEUE_NAMES[queue] for queue in queues]
        async with liveness_record(runtime.pool, names, beat_s=settings.workers.beat_s):
            return await _serve(workers)


async def _serve(workers: list[LeasedWorker]) -> int:
    """Runs the Workers until a signal or until one stops on its own; the exit status."""
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
        try:
            apply_migrations(urls.database_url)
        except MigrationError as error:
            # A database newer than this code, or a failed migration: serving jobs against a schema
            # this code does not know could corrupt data; one log line (not a traceback) says what to do.
            log.critical("%s", error)
            return 1
        return asyncio.run(serve(settings, urls, queues))

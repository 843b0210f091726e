"""The arq worker: opens the pool and the embedding model once, then runs jobs until stopped."""

import asyncio
import logging
from typing import Any

from arq.connections import RedisSettings
from arq.cron import cron
from arq.worker import Worker, func

from core.db import open_pool
from core.embeddings import make_embeddings
from core.llm import make_chat_model
from core.migrations import apply_migrations
from core.queue import INDEX_DOCUMENT, JUDGE_ANSWER, PURGE_QUERY_HISTORY, QUEUE_NAME, WRITE_NOTE
from core.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.jobs import unfinished_jobs
from core.tracing import Tracing
from workers.agent_jobs import write_note
from workers.jobs import index_document
from workers.judge_jobs import judge_answer_job, purge_query_history

log = logging.getLogger(__name__)


def build_worker(settings: Settings, urls: ServiceUrls, **overrides: Any) -> Worker:
    async def on_startup(ctx: dict[str, Any]) -> None:
        ctx["settings"] = settings
        ctx["pool"] = await open_pool(urls.database_url, max_size=4)
        ctx["embeddings"] = await asyncio.to_thread(make_embeddings, settings)
        # Jobs that run an agent (note writing, groundedness) need the chat model; indexing does not.
        ctx["llm"] = make_chat_model(settings, base_url=urls.llm_base_url) if urls.llm_base_url else None
        ctx["tracing"] = Tracing.from_settings(settings)  # LangSmith feedback on judged runs, when configured
        await _requeue_unfinished(ctx)

    async def on_shutdown(ctx: dict[str, Any]) -> None:
        if ctx.get("tracing") is not None:
            await asyncio.to_thread(ctx["tracing"].flush)
        if "pool" in ctx:
            await ctx["pool"].close()

    options: dict[str, Any] = {
        "functions": [
            func(index_document, name=INDEX_DOCUMENT, max_tries=settings.job_max_tries),
            # Two tries: a worker that died mid-note reruns it once; a finished note is never rewritten.
            func(write_note, name=WRITE_NOTE, max_tries=2),
            # A worker that died mid-judgement reruns it once; the evaluation is written at most once.
            func(judge_answer_job, name=JUDGE_ANSWER, max_tries=2),
        ],
        # The retention window, hourly and once when the worker starts; unique: one worker runs it.
        "cron_jobs": [
            cron(purge_query_history, name=PURGE_QUERY_HISTORY, minute=17, run_at_startup=True, unique=True)
        ],
        "redis_settings": RedisSettings.from_dsn(urls.redis_url),
        "queue_name": QUEUE_NAME,
        "on_startup": on_startup,
        "on_shutdown": on_shutdown,
        "max_jobs": settings.worker_max_jobs,
        "poll_delay": settings.worker_poll_delay,
        "job_timeout": 3600,
        "keep_result": 3600,
        "handle_signals": True,
    }
    options.update(overrides)
    return Worker(**options)


async def _requeue_unfinished(ctx: dict[str, Any]) -> None:
    """A job whose queue entry was lost (e.g. Redis restarted) is found again; the same job id
    makes this a no-op for jobs the queue still holds."""
    async with ctx["pool"].connection() as conn:
        pending = await unfinished_jobs(conn)
    if not pending:
        return
    for job in pending:
        await ctx["redis"].enqueue_job(
            INDEX_DOCUMENT,
            str(job["project_id"]),
            str(job["document_id"]),
            job["document_version"],
            _job_id=job["id"],
            _queue_name=QUEUE_NAME,
        )


def run(settings: Settings) -> None:
    """`python -m workers`: uses DATABASE_URL/REDIS_URL, or starts the embedded services."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        build_worker(settings, urls).run()

"""Judge and study-optimizer jobs have jobs rows (migration 0019): a sampled answer's judgement and a
student's FSRS fit are recorded where they are asked for, survive Redis losing its queue (a worker's
start enqueues them again, and they run in their row's lifecycle, a killed worker's death counted), and
their rows go with the history they belong to. Real Postgres and Redis; the module's queues live in a
Redis database of their own, so the session's worker never takes these jobs."""

import dataclasses
import random
import uuid
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from arq.connections import ArqRedis
from arq.jobs import Job

from agents.runs.audit import Audit, JobCaller
from core.jobs.specs import AGENT_QUEUE, INDEX_QUEUE, PurgeHistory, Queue
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import privacy, projects
from core.store.runs import history, jobs
from core.study.reviews import request_optimization
from tests.chat_fakes import ListChat
from tests.stored import owned_project
from tests.workers.runtime import job_runtime
from workers.jobs.framework import WorkerResources
from workers.jobs.judge import purge_query_history
from workers.jobs.leases import LeasedWorker
from workers.main import build_worker

REDIS_DB = 8  # the session's worker polls database 0; tests/workers/test_worker_recovery.py uses 5 and 6

Conn = psycopg.AsyncConnection[dict[str, Any]]


@pytest.fixture(scope="module")
def own_urls(services: ServiceUrls) -> ServiceUrls:
    return dataclasses.replace(services, redis_url=f"{services.redis_url}?db={REDIS_DB}")


@pytest.fixture
async def runtime(settings: Settings, own_urls: ServiceUrls) -> AsyncIterator[Runtime]:
    """The worker's runtime on the module's Redis database, emptied before and after each test; its chat
    model is scripted with no replies (a judge that reached it would fail the test)."""
    async with job_runtime(settings, own_urls, llm=ListChat(responses=[])) as opened:
        await opened.redis.flushdb()
        yield opened
        await opened.redis.flushdb()


async def job_row(db: Conn, job_id: str) -> dict[str, Any] | None:
    cur = await db.execute(
        "SELECT kind, status, created_by, query_id, attempts, deaths, error, result FROM jobs WHERE id = %s",
        (job_id,),
    )
    return await cur.fetchone()


async def sampled_answer(runtime: Runtime, db: Conn, who: str) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    """A student's QA answer recorded as the API records one, sampled for judging (project rate 1):
    (project id, user id, query id)."""
    user, project = await owned_project(db, who)
    audit = Audit("req-agent-jobs", runtime.pool, runtime.settings, runtime.redis, None, random.Random(0))
    query_id = await audit.record(
        JobCaller.of(project.id, user.id, rate=1.0),
        history.RunRecord("qa", "What is a constant?", answer="A value bound to a name.", outcome="answered"),
        judge=True,
    )
    assert query_id is not None
    return project.id, user.id, query_id


async def restart_worker(runtime: Runtime, queue: Queue) -> LeasedWorker:
    """A worker of `queue` starting in this process: its start-up re-enqueues the unfinished rows."""
    worker = build_worker(runtime.settings, runtime.urls, queue=queue, resources=WorkerResources(runtime))
    assert worker.on_startup is not None
    await worker.on_startup(worker.ctx)
    return worker


async def run_queued(worker: LeasedWorker, redis: ArqRedis, job_id: str, job_try: int = 1) -> dict[str, Any]:
    """Runs `job_id` from the worker's queue as arq would: the function by the queued name, with the
    queued arguments (arq's own poll loop would also take the session's other re-enqueued rows)."""
    info = await Job(job_id, redis, _queue_name=worker.queue_name).info()
    assert info is not None, f"{job_id} is not queued"
    function = worker.functions[info.function]
    result: dict[str, Any] = await function.coroutine(
        {**worker.ctx, "job_try": job_try}, *info.args, **info.kwargs
    )
    return result


async def lose_the_queue(redis: ArqRedis) -> None:
    """What a Redis restart without persistence leaves: no queue, no job, no result."""
    await redis.flushdb()


async def test_a_judgement_lost_with_redis_runs_when_the_agents_worker_starts(
    runtime: Runtime, db: Conn
) -> None:
    _, user_id, query_id = await sampled_answer(runtime, db, "judge-lost")
    job_id = f"judge:{query_id}"
    # The row was stored with the answer, and the job queued on the agents queue.
    assert await job_row(db, job_id) == {
        "kind": "judge",
        "status": "queued",
        "created_by": user_id,
        "query_id": query_id,
        "attempts": 0,
        "deaths": 0,
        "error": None,
        "result": None,
    }
    assert await runtime.redis.zscore(AGENT_QUEUE, job_id)
    # A worker took it and was killed mid-judgement (the row stays `running`), then Redis restarted.
    await db.execute("UPDATE jobs SET status = 'running', attempts = 1 WHERE id = %s", (job_id,))
    await lose_the_queue(runtime.redis)
    assert await Job(job_id, runtime.redis, _queue_name=AGENT_QUEUE).info() is None

    worker = await restart_worker(runtime, "agents")
    result = await run_queued(worker, runtime.redis, job_id)
    # It ran (the answer cites no chunk: nothing to judge, so the scripted model is never called), its
    # previous attempt counted as a death.
    assert result == {"status": "skipped", "reason": "its chunks no longer exist"}
    row = await job_row(db, job_id)
    assert row is not None and row["status"] == "succeeded" and row["result"] == result
    assert (row["attempts"], row["deaths"]) == (2, 1)
    # Arq running it again (a retry, a second enqueue) leaves the finished row as it is.
    assert (await run_queued(worker, runtime.redis, job_id, job_try=2))["status"] == "skipped"
    assert await job_row(db, job_id) == row
    await worker.close()


async def test_an_fsrs_fit_lost_with_redis_runs_when_the_index_worker_starts(
    runtime: Runtime, db: Conn
) -> None:
    user, project = await owned_project(db, "fit-lost")
    job_id = f"study-optimize:{project.id}:{user.id}"
    await request_optimization(runtime.pool, runtime.redis, project.id, user.id)
    queued = await job_row(db, job_id)
    assert queued is not None and queued["kind"] == "optimize_study" and queued["status"] == "queued"
    assert queued["created_by"] == user.id and await runtime.redis.zscore(INDEX_QUEUE, job_id)
    await lose_the_queue(runtime.redis)

    started = await restart_worker(runtime, "index")
    result = await run_queued(started, runtime.redis, job_id)
    await started.close()
    assert result["status"] == "skipped"  # the student has no reviews yet: nothing to fit, as before
    row = await job_row(db, job_id)
    assert row is not None and row["status"] == "succeeded" and row["result"] == result

    # Asked for again (the next reviews): the same row is queued again, and arq, which kept no result for
    # the first run, takes the same job id at once; a real arq Worker runs it.
    await lose_the_queue(runtime.redis)
    await request_optimization(runtime.pool, runtime.redis, project.id, user.id)
    assert (await job_row(db, job_id) or {})["status"] == "queued"
    worker = build_worker(
        runtime.settings,
        runtime.urls,
        queue="index",
        resources=WorkerResources(runtime),
        burst=True,
        on_startup=None,  # only this job: the session's other unfinished rows stay out of this queue
        cron_jobs=[],
    )
    await worker.main()
    await worker.close()
    assert (await job_row(db, job_id) or {})["status"] == "succeeded"
    await request_optimization(runtime.pool, runtime.redis, project.id, user.id)
    assert await runtime.redis.zscore(INDEX_QUEUE, job_id)
    # A student who leaves the project takes their optimize row with them (forget_member()).
    await db.execute(
        "DELETE FROM project_members WHERE project_id = %s AND user_id = %s", (project.id, user.id)
    )
    assert await job_row(db, job_id) is None


async def test_judge_rows_go_with_their_history_and_finished_rows_after_its_retention(
    runtime: Runtime, db: Conn
) -> None:
    project_id, user_id, query_id = await sampled_answer(runtime, db, "judge-purged")
    erased = await sampled_answer(runtime, db, "judge-erased")
    assert await job_row(db, f"judge:{query_id}") is not None
    # The retention purge deletes the query (31 days old, window 30) and its judge row with it.
    await db.execute(
        "UPDATE query_history SET created_at = now() - interval '31 days' WHERE id = %s", (query_id,)
    )
    thirty = runtime.settings.with_values({"QUERY_HISTORY_RETENTION_DAYS": 30})
    await purge_query_history(dataclasses.replace(runtime, settings=thirty), PurgeHistory())
    assert await history.query_to_judge(db, project_id=project_id, user_id=user_id, query_id=query_id) is None
    assert await job_row(db, f"judge:{query_id}") is None
    # A student erasing their own history takes the judge rows too.
    erased_project, erased_user, erased_query = erased
    await privacy.delete_own_history(db, project_id=erased_project, user_id=erased_user)
    assert await job_row(db, f"judge:{erased_query}") is None

    # Finished optimize rows are kept as long as the history's window, then purged; unfinished ones stay.
    user, project = await owned_project(db, "fit-purged")
    other = await projects.create_project(db, user_id=user.id, name="other", description="", language="en")
    old, fresh = (f"study-optimize:{p}:{user.id}" for p in (project.id, other.id))
    for p in (project.id, other.id):
        await request_optimization(runtime.pool, runtime.redis, p, user.id)
    await db.execute(
        "UPDATE jobs SET status = 'succeeded', finished_at = now() - interval '31 days' WHERE id = %s", (old,)
    )
    outcome = await purge_query_history(dataclasses.replace(runtime, settings=thirty), PurgeHistory())
    assert outcome["purged"]["agent_jobs"] >= 1
    assert await job_row(db, old) is None and (await job_row(db, fresh) or {})["status"] == "queued"
    await db.execute("UPDATE jobs SET status = 'failed', finished_at = now() WHERE id = %s", (fresh,))
    # A job for a user deleted since: its row goes at the next purge (nobody to run it for).
    await db.execute("UPDATE jobs SET created_by = NULL WHERE id = %s", (fresh,))
    await purge_query_history(dataclasses.replace(runtime, settings=thirty), PurgeHistory())
    assert await job_row(db, fresh) is None


async def test_the_api_shows_no_judge_or_optimize_row(runtime: Runtime, db: Conn) -> None:
    """They are the workers' bookkeeping of one student's query or reviews (GET .../jobs/{id} is 404)."""
    project_id, user_id, query_id = await sampled_answer(runtime, db, "judge-hidden")
    job_id = f"judge:{query_id}"
    assert await job_row(db, job_id) is not None
    assert await jobs.get_job(db, project_id=project_id, user_id=user_id, job_id=job_id) is None
    await request_optimization(runtime.pool, runtime.redis, project_id, user_id)
    fit = f"study-optimize:{project_id}:{user_id}"
    assert await jobs.get_job(db, project_id=project_id, user_id=user_id, job_id=fit) is None
    # Finished, so that no later worker start in this session runs them.
    await db.execute(
        "UPDATE jobs SET status = 'succeeded', finished_at = now() WHERE id = ANY(%s)", ([job_id, fit],)
    )

"""Jobs survive a killed worker (issue 10, part 4): arq's in-progress keys are leases that a dead worker
stops renewing, deaths are counted in the jobs table, and a poison pill fails alone. Real Postgres,
Redis and worker processes, killed with SIGKILL. The module's API and workers use a Redis database of
their own, so the session's worker never takes these jobs."""

import asyncio
import dataclasses
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from arq.connections import RedisSettings, create_pool
from arq.jobs import Job

from core.jobs.specs import AGENT_QUEUE, INDEX_QUEUE, IndexDocument
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.content import documents
from core.store.runs import notes
from core.store.runs.jobs import WORKER_DIED, index_job_id
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import (
    SHARED_DATA,
    UserFactory,
    create_project,
    own_app,
    upload,
    wait_for_job,
)
from tests.stored import owned_project, uploaded_document
from tests.workers.poison_worker import POISON_MARKER
from tests.workers.runtime import job_runtime
from workers.chunking.sections import ChunkingConfig, chunk_document
from workers.jobs.framework import WorkerResources
from workers.jobs.index import index_document
from workers.main import QUEUES, UNKNOWN_REQUESTER, build_worker
from workers.parsing import parse_document

RUST = SHARED_DATA / "rust-book" / "src"
CHAPTER = RUST / "ch04-01-what-is-ownership.md"  # ~24 chunks: two embedding batches
REDIS_DB = 5  # the session's worker polls database 0

Conn = psycopg.AsyncConnection[dict[str, Any]]


@pytest.fixture(scope="module")
def own_urls(services: ServiceUrls) -> ServiceUrls:
    return dataclasses.replace(services, redis_url=f"{services.redis_url}?db={REDIS_DB}")


async def book(db: Conn, who: str) -> documents.Document:
    """CHAPTER as an uploaded document of a new user's project, not yet indexed."""
    user, project = await owned_project(db, who)
    return await uploaded_document(db, project.id, user.id, "book.md", CHAPTER.read_bytes())


async def job_row(db: Conn, job_id: str) -> dict[str, Any]:
    cur = await db.execute(
        "SELECT status, stage, done, total, attempts, deaths, error FROM jobs WHERE id = %s", (job_id,)
    )
    row = await cur.fetchone()
    assert row is not None, job_id
    return row


async def wait_for_row(
    db: Conn, job_id: str, condition: Callable[[dict[str, Any]], bool], timeout: float
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = await job_row(db, job_id)
        if condition(row):
            return row
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {job_id} never got there in {timeout} s: {await job_row(db, job_id)}")


async def chunk_hashes(db: Conn, document_id: str) -> list[tuple[int, str]]:
    cur = await db.execute(
        "SELECT ordinal, content_hash FROM chunks WHERE document_id = %s ORDER BY ordinal", (document_id,)
    )
    return [(row["ordinal"], row["content_hash"]) for row in await cur.fetchall()]


async def document_row(db: Conn, document_id: str) -> dict[str, Any]:
    cur = await db.execute(
        "SELECT status, error, indexed_version FROM documents WHERE id = %s", (document_id,)
    )
    row = await cur.fetchone()
    assert row is not None
    return row


def uninterrupted_chunks(settings: Settings, content: bytes, title: str) -> list[tuple[int, str]]:
    """What the index job computes for this content, in-process and without interruption (chunking is
    deterministic, and a chunk's hash covers its embedded text: title, section path and text)."""
    parsed = parse_document(content, source_type="markdown", filename=f"{title}.md", title=title)
    config = ChunkingConfig(
        max_chars=settings.chunking.max_chars,
        overlap_chars=settings.chunking.overlap_chars,
        min_chars=settings.chunking.min_chars,
    )
    return [(draft.ordinal, draft.content_hash) for draft in chunk_document(parsed, config)]


async def test_a_job_killed_mid_embedding_reruns_to_exactly_the_chunks_of_an_uninterrupted_run(
    settings: Settings, own_urls: ServiceUrls, data_dir: Path, db: Conn, make_user: UserFactory
) -> None:
    content = CHAPTER.read_bytes()
    expected = uninterrupted_chunks(settings, content, "book")
    assert len(expected) > settings.embeddings.batch_size  # more than one batch: a kill can land between
    async with own_app(settings, own_urls) as (_, http):
        owner = await make_user("recovery")
        project_id = await create_project(http, owner, name="Recovery", language="en")
        accepted = (await upload(http, owner, project_id, "book.md", content)).json()
        job_id, document_id = accepted["job_id"], accepted["document_id"]

        first = start_worker(own_urls, data_dir, "--queue", "index")
        try:
            await wait_for_row(db, job_id, lambda r: r["stage"] == "embedding" and r["done"] > 0, timeout=300)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
        killed = await job_row(db, job_id)
        assert killed["status"] == "running" and killed["stage"] == "embedding", killed
        assert killed["done"] < killed["total"], killed  # mid-embedding
        assert await chunk_hashes(db, document_id) == []  # nothing half-indexed is visible
        assert (await document_row(db, document_id))["status"] == "processing"

        second = start_worker(own_urls, data_dir, "--queue", "index")
        started = time.monotonic()
        try:
            await wait_for_row(db, job_id, lambda r: r["attempts"] == 2, timeout=120)
            restarted_after = time.monotonic() - started
            job = await wait_for_job(http, owner, project_id, job_id, timeout=600)
        finally:
            stop_worker(second)
        assert second.returncode == 0  # SIGTERM stops the worker and its lease renewal cleanly

    # A new worker takes the job over within 60 s of starting (the 30 s lease has run out by then).
    assert restarted_after < 60, restarted_after
    assert job["status"] == "succeeded" and job["attempts"] == 2 and job["deaths"] == 1, job
    assert await document_row(db, document_id) == {"status": "ready", "error": None, "indexed_version": 1}
    chunks = await chunk_hashes(db, document_id)
    assert chunks == expected and job["chunks_total"] == len(expected)  # none missing, none twice


async def test_a_poison_pill_fails_after_job_max_deaths_while_other_documents_get_indexed(
    settings: Settings, own_urls: ServiceUrls, data_dir: Path, db: Conn, make_user: UserFactory
) -> None:
    env = {"JOB_MAX_DEATHS": "2", "WORKER_LEASE_S": "3", "WORKER_MAX_JOBS": "2"}
    async with own_app(settings, own_urls) as (_, http):
        owner = await make_user("poison")
        project_id = await create_project(http, owner, name="Poison", language="en")
        # Both are queued before any worker runs, so the first worker starts them side by side.
        poison = b"# Chapter 1\n\nIt reads like any other chapter, but " + POISON_MARKER + b" is in it.\n"
        pill = (await upload(http, owner, project_id, "pill.md", poison)).json()
        chapter = (RUST / "ch05-00-structs.md").read_bytes()
        other = (await upload(http, owner, project_id, "ownership.md", chapter)).json()

        deaths: list[int] = []
        process = start_worker(own_urls, data_dir, module="tests.workers.poison_worker", **env)
        try:
            deadline = time.monotonic() + 240
            while (await job_row(db, pill["job_id"]))["status"] != "failed":
                assert time.monotonic() < deadline, await job_row(db, pill["job_id"])
                if process.poll() is not None:  # a supervisor restarts the dead worker
                    deaths.append(process.returncode)
                    process = start_worker(own_urls, data_dir, module="tests.workers.poison_worker", **env)
                await asyncio.sleep(0.2)
            indexed = await wait_for_job(http, owner, project_id, other["job_id"], timeout=300)
            assert process.poll() is None  # the worker that failed the pill is alive and well
        finally:
            stop_worker(process)

    assert deaths == [137, 137]  # JOB_MAX_DEATHS deaths, then the third start fails it without parsing
    failed = await job_row(db, pill["job_id"])
    assert failed["error"] == WORKER_DIED == "the worker died while processing this file"
    assert failed["deaths"] == 2 and failed["attempts"] == 3, failed
    assert await document_row(db, pill["document_id"]) == {
        "status": "failed",
        "error": WORKER_DIED,
        "indexed_version": None,
    }
    # The other document was running next to the pill when it first struck, and still ends ready.
    assert indexed["status"] == "succeeded" and indexed["deaths"] <= 1, indexed
    assert (await document_row(db, other["document_id"]))["status"] == "ready"


async def test_an_index_job_past_its_time_limit_ends_failed_with_the_reason(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    """INDEX_JOB_TIMEOUT_S stops the job (here mid-embedding, with the real model) and says so, instead
    of leaving it `running` as arq's own timeout did."""
    document = await book(db, "timeout")
    limited = settings.with_values({"INDEX_JOB_TIMEOUT_S": 0.5})
    async with job_runtime(settings, services, settings=limited) as runtime:
        result = await index_document(runtime, IndexDocument(document.project_id, document.id, 1), job_try=1)
    job = await job_row(db, index_job_id(document.id, 1))
    assert result["status"] == "failed" and job["status"] == "failed", job
    assert job["error"] == "indexing took longer than 0.5 s and was stopped"
    assert await document_row(db, str(document.id)) == {
        "status": "failed",
        "error": job["error"],
        "indexed_version": None,
    }
    assert await chunk_hashes(db, str(document.id)) == []


async def test_a_starting_worker_queues_again_what_redis_lost_each_kind_on_its_queue(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    urls = dataclasses.replace(services, redis_url=f"{services.redis_url}?db={REDIS_DB + 1}")  # empty
    user, project = await owned_project(db, "requeue")
    document = await uploaded_document(db, project.id, user.id, "notes.md", b"# Notes\n\nSome text.\n")
    note_id = notes.new_note_job_id()
    request = {"plan_id": None, "topic": "ownership", "max_sections": 2}
    assert await notes.create_note_job(
        db, project_id=project.id, user_id=user.id, job_id=note_id, request=request
    )
    queue = await create_pool(RedisSettings.from_dsn(urls.redis_url))
    try:
        async with job_runtime(settings, urls) as runtime:
            await queue.flushdb()
            for name in QUEUES:
                worker = build_worker(settings, urls, queue=name, resources=WorkerResources(runtime))
                assert worker.on_startup is not None
                await worker.on_startup(worker.ctx)
        index_id = index_job_id(document.id, 1)
        index_job = await Job(index_id, queue, _queue_name=INDEX_QUEUE).info()
        note_job = await Job(note_id, queue, _queue_name=AGENT_QUEUE).info()
        assert await queue.zscore(INDEX_QUEUE, index_id) and not await queue.zscore(AGENT_QUEUE, index_id)
        assert await queue.zscore(AGENT_QUEUE, note_id) and not await queue.zscore(INDEX_QUEUE, note_id)
    finally:
        await queue.flushdb()
        await queue.aclose()
    assert index_job is not None and index_job.function == "index_document"
    assert index_job.args == (str(project.id), str(document.id), 1)
    assert note_job is not None and note_job.function == "write_note"
    assert note_job.args == (str(project.id), str(user.id), note_id, None, "ownership", 2)


async def test_a_job_whose_requester_is_not_recorded_ends_failed_instead_of_queued_for_ever(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    """A note queued before migration 0010 (no created_by) cannot run again: the starting worker ends it
    with the reason, so nothing stays `queued` with no worker ever taking it."""
    urls = dataclasses.replace(services, redis_url=f"{services.redis_url}?db={REDIS_DB + 1}")
    user, project = await owned_project(db, "unknown-requester")
    note_id = notes.new_note_job_id()
    request = {"plan_id": None, "topic": "ownership", "max_sections": 2}
    assert await notes.create_note_job(
        db, project_id=project.id, user_id=user.id, job_id=note_id, request=request
    )
    await db.execute("UPDATE jobs SET created_by = NULL WHERE id = %s", (note_id,))
    queue = await create_pool(RedisSettings.from_dsn(urls.redis_url))
    try:
        async with job_runtime(settings, urls) as runtime:
            await queue.flushdb()
            worker = build_worker(settings, urls, queue="agents", resources=WorkerResources(runtime))
            assert worker.on_startup is not None
            await worker.on_startup(worker.ctx)
        assert not await queue.zscore(AGENT_QUEUE, note_id)
    finally:
        await queue.flushdb()
        await queue.aclose()
    cur = await db.execute("SELECT status, error FROM jobs WHERE id = %s", (note_id,))
    assert await cur.fetchone() == {"status": "failed", "error": UNKNOWN_REQUESTER}


async def test_a_graceful_stop_mid_job_puts_it_back_in_the_queue_without_a_death(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    """SIGTERM makes arq cancel running jobs and run them again later: the row goes back to `queued`,
    so the next start is not mistaken for a death."""
    document = await book(db, "stop")
    job_id, args = index_job_id(document.id, 1), IndexDocument(document.project_id, document.id, 1)
    async with job_runtime(settings, services) as runtime:
        running = asyncio.create_task(index_document(runtime, args, job_try=1))
        await wait_for_row(db, job_id, lambda r: r["stage"] == "embedding", timeout=120)
        running.cancel()  # what arq's signal handler does to a running job
        with pytest.raises(asyncio.CancelledError):
            await running
        stopped = await job_row(db, job_id)
        assert stopped["status"] == "queued" and stopped["deaths"] == 0, stopped
        result = await index_document(runtime, args, job_try=2)
    assert result["status"] == "succeeded"
    finished = await job_row(db, job_id)
    assert finished["status"] == "succeeded" and finished["attempts"] == 2 and finished["deaths"] == 0

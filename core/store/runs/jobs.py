"""Jobs rows: their lifecycle (worker side) and index jobs' status (API side, membership-scoped).
The judge and optimize kinds' own statements are in core/store/runs/agent_jobs.py."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.store.sql.access import Connection, in_project, scope
from core.store.sql.rows import columns, fetch_all, fetch_one

# What a job that failed because its worker kept dying says (the poison-pill reason).
WORKER_DIED = "the worker died while processing this file"


@dataclass(frozen=True, slots=True)
class Job:
    """An index job's status as the API shows it."""

    id: str
    project_id: UUID
    document_id: UUID | None
    document_version: int | None
    kind: str
    status: str
    stage: str
    done: int
    total: int
    chunks_total: int | None
    chunks_embedded: int | None
    attempts: int
    deaths: int
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


_COLUMNS = columns(Job, prefix="j.")


@dataclass(frozen=True, slots=True)
class UnfinishedJob:
    """A queued or running job, with what a worker needs to enqueue it again."""

    id: str
    kind: str
    project_id: UUID
    document_id: UUID | None
    document_version: int | None
    created_by: UUID | None
    result: dict[str, Any] | None  # a write_note job's request until it finishes
    query_id: UUID | None  # a judge job's query


@dataclass(frozen=True, slots=True)
class AttemptState:
    status: str
    deaths: int


def index_job_id(document_id: UUID, version: int) -> str:
    """One job per (document, version): enqueueing it twice runs it once."""
    return f"index:{document_id}:{version}"


async def get_job(conn: Connection, *, project_id: UUID, user_id: UUID, job_id: str) -> Job | None:
    """An index or note job of the project. Judge and optimize rows are the workers' bookkeeping of one
    student's query or reviews: no member reads them through the API."""
    query = (
        f"SELECT {_COLUMNS} FROM jobs j WHERE j.id = %(job_id)s AND j.kind IN ('index', 'write_note')"
        f" AND {in_project('j')}"
    )
    return await fetch_one(conn, class_row(Job), query, scope(project_id, user_id, job_id=job_id))


async def unfinished_jobs(conn: Connection, *, kinds: Sequence[str]) -> list[UnfinishedJob]:
    """Jobs of these kinds to re-enqueue when a worker starts (the queue may have lost them)."""
    return await fetch_all(
        conn,
        class_row(UnfinishedJob),
        "SELECT id, kind, project_id, document_id, document_version, created_by, result, query_id FROM jobs"
        " WHERE kind = ANY(%(kinds)s) AND status IN ('queued', 'running') ORDER BY created_at",
        {"kinds": list(kinds)},
    )


async def attempt_state(conn: Connection, *, project_id: UUID, job_id: str) -> AttemptState | None:
    """The job's status and deaths before an attempt starts: a job still `running` (its last worker
    died) or with deaths on record is suspect, and the worker runs it alone."""
    return await fetch_one(
        conn,
        class_row(AttemptState),
        "SELECT status, deaths FROM jobs WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id},
    )


async def begin_attempt(
    conn: Connection, *, project_id: UUID, job_id: str, stage: str, rerun_succeeded: bool = True
) -> int | None:
    """Marks the job running for a new attempt and returns its deaths, counting the previous attempt
    as one when it is still `running`: the worker holds arq's in-progress lease, so no live worker runs
    it, and a retry or a graceful stop sets the job back to `queued` first. None: no such job (or one
    that succeeded, when it must not run twice)."""
    deaths: int | None = await fetch_one(
        conn,
        scalar_row,
        "WITH prev AS (SELECT id, status FROM jobs WHERE id = %(job_id)s AND project_id = %(project_id)s"
        " AND (%(rerun)s OR status <> 'succeeded') FOR UPDATE)"
        " UPDATE jobs j SET status = 'running', stage = %(stage)s, done = 0, total = 0,"
        " attempts = j.attempts + 1, deaths = j.deaths + (prev.status = 'running')::int,"
        " started_at = coalesce(j.started_at, now()), finished_at = NULL, error = NULL"
        " FROM prev WHERE j.id = prev.id RETURNING j.deaths",
        {"job_id": job_id, "project_id": project_id, "stage": stage, "rerun": rerun_succeeded},
    )
    return deaths


async def start_job(conn: Connection, *, project_id: UUID, job_id: str) -> int | None:
    """An index job's attempt begins (stage `parsing`); returns its deaths so far."""
    return await begin_attempt(conn, project_id=project_id, job_id=job_id, stage="parsing")


async def requeue_job(conn: Connection, *, project_id: UUID, job_id: str) -> None:
    """The attempt stopped on purpose (a retry is scheduled, or the worker is shutting down): the job
    waits in the queue again, and its next start is not counted as a death."""
    await conn.execute(
        "UPDATE jobs SET status = 'queued', stage = 'queued'"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND status = 'running'",
        {"job_id": job_id, "project_id": project_id},
    )


async def reset_for_reindex(conn: Connection, *, project_id: UUID, job_id: str) -> bool:
    """A finished (failed or succeeded) index job queued again by POST .../reindex, with a fresh
    allowance of deaths. False when the job is still queued or running (or missing): left as it is."""
    cur = await conn.execute(
        "UPDATE jobs SET status = 'queued', stage = 'queued', done = 0, total = 0, deaths = 0,"
        " error = NULL, finished_at = NULL"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND kind = 'index'"
        " AND status IN ('failed', 'succeeded') RETURNING id",
        {"job_id": job_id, "project_id": project_id},
    )
    return await cur.fetchone() is not None


async def set_progress(
    conn: Connection,
    *,
    project_id: UUID,
    job_id: str,
    stage: str,
    done: int = 0,
    total: int = 0,
) -> None:
    await conn.execute(
        "UPDATE jobs SET stage = %(stage)s, done = %(done)s, total = %(total)s"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id, "stage": stage, "done": done, "total": total},
    )


async def finish_job(
    conn: Connection, *, project_id: UUID, job_id: str, chunks_total: int, chunks_embedded: int
) -> None:
    await conn.execute(
        "UPDATE jobs SET status = 'succeeded', stage = 'done', done = total,"
        " chunks_total = %(chunks_total)s, chunks_embedded = %(chunks_embedded)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {
            "job_id": job_id,
            "project_id": project_id,
            "chunks_total": chunks_total,
            "chunks_embedded": chunks_embedded,
        },
    )


async def fail_job(conn: Connection, *, project_id: UUID, job_id: str, error: str) -> None:
    await conn.execute(
        "UPDATE jobs SET status = 'failed', error = %(error)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id, "error": error},
    )


async def succeeded_result(
    conn: Connection, *, project_id: UUID, job_id: str, kind: str
) -> dict[str, Any] | None:
    """A succeeded job's result (JSON) of this kind in the project, else None: what a rerun of a job
    that must not run twice (a note, an audio overview) answers instead."""
    result: dict[str, Any] | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT result FROM jobs WHERE id = %(job_id)s AND project_id = %(project_id)s"
        " AND kind = %(kind)s AND status = 'succeeded'",
        {"job_id": job_id, "project_id": project_id, "kind": kind},
    )
    return result

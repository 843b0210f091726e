"""Index jobs: their lifecycle (worker side) and their status (API side, membership-scoped)."""

from typing import Any

from psycopg import AsyncConnection

from core.store.access import member_of

_COLUMNS = (
    "j.id, j.project_id, j.document_id, j.document_version, j.kind, j.status, j.stage, j.done, j.total,"
    " j.chunks_total, j.chunks_embedded, j.attempts, j.error, j.created_at, j.started_at, j.finished_at"
)


def index_job_id(document_id: Any, version: int) -> str:
    """One job per (document, version): enqueueing it twice runs it once."""
    return f"index:{document_id}:{version}"


async def get_job(
    conn: AsyncConnection, *, project_id: Any, user_id: Any, job_id: str
) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"SELECT {_COLUMNS} FROM jobs j WHERE j.id = %(job_id)s AND j.project_id = %(project_id)s"
        f" AND {member_of('j.project_id')}",
        {"project_id": project_id, "user_id": user_id, "job_id": job_id},
    )
    return await cur.fetchone()


async def unfinished_jobs(conn: AsyncConnection) -> list[dict[str, Any]]:
    """Jobs to re-enqueue when a worker starts (the queue may have lost them)."""
    cur = await conn.execute(
        "SELECT id, project_id, document_id, document_version FROM jobs"
        " WHERE kind = 'index' AND status IN ('queued', 'running') ORDER BY created_at"
    )
    return await cur.fetchall()


async def start_job(conn: AsyncConnection, *, project_id: Any, job_id: str) -> None:
    await conn.execute(
        "UPDATE jobs SET status = 'running', stage = 'parsing', attempts = attempts + 1,"
        " started_at = coalesce(started_at, now()), error = NULL"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id},
    )


async def set_progress(
    conn: AsyncConnection, *, project_id: Any, job_id: str, stage: str, done: int = 0, total: int = 0
) -> None:
    await conn.execute(
        "UPDATE jobs SET stage = %(stage)s, done = %(done)s, total = %(total)s"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id, "stage": stage, "done": done, "total": total},
    )


async def finish_job(
    conn: AsyncConnection, *, project_id: Any, job_id: str, chunks_total: int, chunks_embedded: int
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


async def fail_job(conn: AsyncConnection, *, project_id: Any, job_id: str, error: str) -> None:
    await conn.execute(
        "UPDATE jobs SET status = 'failed', error = %(error)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s",
        {"job_id": job_id, "project_id": project_id, "error": error},
    )

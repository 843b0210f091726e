"""Note-writing jobs: rows of the jobs table with kind 'write_note' and id 'note:{uuid}'.

Progress (jobs.set_progress) and failure (jobs.fail_job) use the generic job functions; the API side
here is scoped by membership in SQL, the worker side by the project taken from the job."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from core.store.runs.jobs import begin_attempt, succeeded_result
from core.store.sql.access import Connection, in_project, scope, writer_of
from core.store.sql.rows import columns, fetch_one

KIND = "write_note"


@dataclass(frozen=True, slots=True)
class NoteJob:
    id: str
    project_id: UUID
    document_id: UUID | None  # the written note, once the job succeeded
    kind: str
    status: str
    stage: str
    done: int
    total: int
    attempts: int
    error: str | None
    result: dict[str, Any] | None  # the request until the job succeeds, then what the writer did
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


_COLUMNS = columns(NoteJob, prefix="j.")


def new_note_job_id() -> str:
    return f"note:{uuid4()}"


async def create_note_job(
    conn: Connection, *, project_id: UUID, user_id: UUID, job_id: str, request: dict[str, Any]
) -> NoteJob | None:
    """The queued job row; `request` (plan id or topic) is kept in result until the job replaces it.
    None when the caller may not write to the project."""
    cur = await conn.execute(
        "INSERT INTO jobs (id, project_id, kind, result, created_by)"
        " SELECT %(job_id)s, p.id, 'write_note', %(result)s, %(user_id)s"
        f" FROM projects p WHERE p.id = %(project_id)s AND {writer_of('p.id')}"
        " RETURNING id",
        scope(project_id, user_id, job_id=job_id, result=Jsonb({"request": request})),
    )
    if await cur.fetchone() is None:
        return None
    return await get_note_job(conn, project_id=project_id, user_id=user_id, job_id=job_id)


async def get_note_job(conn: Connection, *, project_id: UUID, user_id: UUID, job_id: str) -> NoteJob | None:
    query = (
        f"SELECT {_COLUMNS} FROM jobs j WHERE j.id = %(job_id)s"
        f" AND j.kind = 'write_note' AND {in_project('j')}"
    )
    return await fetch_one(conn, class_row(NoteJob), query, scope(project_id, user_id, job_id=job_id))


async def start_note_job(conn: Connection, *, project_id: UUID, job_id: str, stage: str) -> int | None:
    """The attempt's deaths so far (see jobs.begin_attempt); None when the job does not exist or
    already succeeded: a rerun must not write a second note."""
    return await begin_attempt(conn, project_id=project_id, job_id=job_id, stage=stage, rerun_succeeded=False)


async def finished_result(conn: Connection, *, project_id: UUID, job_id: str) -> dict[str, Any] | None:
    """The succeeded job's result (JSON), else None."""
    return await succeeded_result(conn, project_id=project_id, job_id=job_id, kind="write_note")


async def finish_note_job(
    conn: Connection,
    *,
    project_id: UUID,
    job_id: str,
    document_id: UUID,
    result: dict[str, Any],
) -> None:
    await conn.execute(
        "UPDATE jobs SET status = 'succeeded', stage = 'done', done = total, document_id = %(document_id)s,"
        " document_version = 1, result = %(result)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND kind = 'write_note'",
        {"job_id": job_id, "project_id": project_id, "document_id": document_id, "result": Jsonb(result)},
    )

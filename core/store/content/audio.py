"""Audio overviews: their jobs rows (kind 'audio_overview', id 'audio:{overview id}') and the finished
overviews (migration 0022). Personal: the creator and the project's owners read them, in each statement's
SQL; the worker side is scoped by the project taken from the job."""

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.runs.jobs import begin_attempt, succeeded_result
from core.store.sql.access import Connection, member_of, owner_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one

KIND = "audio_overview"


def job_id_of(overview_id: UUID) -> str:
    return f"audio:{overview_id}"


# The caller made it, or owns the project; and is a member (in the SQL of every API-side read).
_VISIBLE = f"(j.created_by = %(user_id)s OR {owner_of('j.project_id')}) AND {member_of('j.project_id')}"


@dataclass(frozen=True, slots=True)
class AudioJob:
    """An overview as its maker follows it: the job's progress, then the overview's own fields."""

    id: UUID  # the overview's id (the job's is 'audio:{id}')
    project_id: UUID
    created_by: UUID | None
    status: str
    stage: str
    done: int
    total: int
    error: str | None
    request: dict[str, Any]  # what was asked (documents, voices), as POST kept it
    created_at: datetime
    finished_at: datetime | None
    title: str | None  # the rest once the overview exists
    language: str | None
    voices: int | None
    voice: str | None
    duration_ms: int | None
    script: list[dict[str, Any]] | None  # each line: speaker, text, citations, start_ms, end_ms


_COLUMNS = columns(
    AudioJob,
    prefix="o.",
    computed={
        "id": "substr(j.id, 7)::uuid",
        **{name: f"j.{name}" for name in ("project_id", "created_by", "status", "stage", "done", "total")},
        "error": "j.error",
        "request": "coalesce(j.result->'request', '{}'::jsonb)",
        "created_at": "j.created_at",
        "finished_at": "j.finished_at",
    },
)
_FROM = "FROM jobs j LEFT JOIN audio_overviews o ON o.project_id = j.project_id AND j.id = 'audio:' || o.id"


async def create_audio_job(
    conn: Connection, *, project_id: UUID, user_id: UUID, overview_id: UUID, request: dict[str, Any]
) -> AudioJob | None:
    """The queued job row, any member's (a student makes their own overview); None: not a member."""
    cur = await conn.execute(
        "INSERT INTO jobs (id, project_id, kind, result, created_by)"
        " SELECT %(job_id)s, p.id, 'audio_overview', %(result)s, %(user_id)s"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')} RETURNING id",
        scope(project_id, user_id, job_id=job_id_of(overview_id), result=Jsonb({"request": request})),
    )
    if await cur.fetchone() is None:
        return None
    return await get_audio_job(conn, project_id=project_id, user_id=user_id, overview_id=overview_id)


async def get_audio_job(
    conn: Connection, *, project_id: UUID, user_id: UUID, overview_id: UUID
) -> AudioJob | None:
    query = (
        f"SELECT {_COLUMNS} {_FROM} WHERE j.id = %(job_id)s AND j.kind = 'audio_overview'"
        f" AND j.project_id = %(project_id)s AND {_VISIBLE}"
    )
    params = scope(project_id, user_id, job_id=job_id_of(overview_id))
    return await fetch_one(conn, class_row(AudioJob), query, params)


async def list_audio_jobs(conn: Connection, *, project_id: UUID, user_id: UUID, page: Page) -> list[AudioJob]:
    """The caller's overviews (an owner: everyone's), newest first."""
    query = (
        f"SELECT {_COLUMNS} {_FROM} WHERE j.kind = 'audio_overview' AND j.project_id = %(project_id)s"
        f" AND {_VISIBLE} ORDER BY j.created_at DESC, j.id LIMIT %(limit)s OFFSET %(offset)s"
    )
    return await fetch_all(conn, class_row(AudioJob), query, scope(project_id, user_id, **page))


async def audio_file(
    conn: Connection, *, project_id: UUID, user_id: UUID, overview_id: UUID, fmt: str
) -> bytes | None:
    """The overview's recording in `fmt` ('ogg' or 'mp3')."""
    column = {"ogg": "o.ogg", "mp3": "o.mp3"}[fmt]  # never the caller's text in the SQL
    data: bytes | None = await fetch_one(
        conn,
        scalar_row,
        f"SELECT {column} {_FROM} WHERE j.id = %(job_id)s AND j.kind = 'audio_overview'"
        f" AND j.project_id = %(project_id)s AND {_VISIBLE}",
        scope(project_id, user_id, job_id=job_id_of(overview_id)),
    )
    return data


async def fail_audio_job(
    conn: Connection, *, project_id: UUID, user_id: UUID, overview_id: UUID, error: str
) -> None:
    """The API could not queue it: the row says why (the caller's own row only)."""
    await conn.execute(
        "UPDATE jobs SET status = 'failed', error = %(error)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND created_by = %(user_id)s",
        scope(project_id, user_id, job_id=job_id_of(overview_id), error=error),
    )


# The worker's side: the job's own project, taken from the job.


async def start_audio_job(conn: Connection, *, project_id: UUID, job_id: str, stage: str) -> int | None:
    """The attempt's deaths so far; None when the job is unknown or already succeeded (never twice)."""
    return await begin_attempt(conn, project_id=project_id, job_id=job_id, stage=stage, rerun_succeeded=False)


async def finished_result(conn: Connection, *, project_id: UUID, job_id: str) -> dict[str, Any] | None:
    """The succeeded job's result (JSON), else None."""
    return await succeeded_result(conn, project_id=project_id, job_id=job_id, kind="audio_overview")


@dataclass(frozen=True)
class Overview:
    """A finished overview as the worker writes it."""

    id: UUID
    project_id: UUID
    created_by: UUID
    title: str
    language: str
    voices: int
    voice: str
    document_ids: list[UUID]
    script: list[dict[str, Any]]
    duration_ms: int
    ogg: bytes
    mp3: bytes


async def save_overview(conn: Connection, overview: Overview, result: dict[str, Any]) -> None:
    """The overview and its job's success, in the caller's transaction: both or neither. The job keeps
    the request next to the outcome (ids, counts, timings: never the text)."""
    names = [field.name for field in fields(Overview)]
    values = {name: getattr(overview, name) for name in names} | {"script": Jsonb(overview.script)}
    await conn.execute(
        f"INSERT INTO audio_overviews ({', '.join(names)})"
        f" VALUES ({', '.join(f'%({name})s' for name in names)})",
        values,
    )
    await conn.execute(
        "UPDATE jobs SET status = 'succeeded', stage = 'done', done = total,"
        " result = jsonb_build_object('request', result->'request') || %(result)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND kind = 'audio_overview'",
        {"job_id": job_id_of(overview.id), "project_id": overview.project_id, "result": Jsonb(result)},
    )

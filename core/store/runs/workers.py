"""Worker processes, one row each (migration 0021): registered at start, beating while alive, marked at a
clean stop. A process whose beat is older than three beats is dead (killed, its machine gone)."""

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from psycopg.rows import class_row, scalar_row

from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_all, fetch_one

BEATS_TO_DEAD = 3
KEPT_DAYS = 1  # rows of processes stopped or silent this long are deleted at the next worker start


@dataclass(frozen=True, slots=True)
class WorkerProcess:
    id: str
    host: str
    pid: int
    queues: list[str]
    started_at: datetime
    last_beat_at: datetime
    stopped_at: datetime | None
    status: Literal["running", "stopped", "dead"]


async def register_worker(
    conn: Connection, process_id: str, *, host: str, pid: int, queues: list[str]
) -> None:
    await conn.execute(
        "DELETE FROM worker_processes WHERE last_beat_at < now() - make_interval(days => %s)", (KEPT_DAYS,)
    )
    await conn.execute(
        "INSERT INTO worker_processes (id, host, pid, queues) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET last_beat_at = now(), stopped_at = NULL",
        (process_id, host, pid, queues),
    )


async def beat(conn: Connection, process_id: str) -> None:
    await conn.execute("UPDATE worker_processes SET last_beat_at = now() WHERE id = %s", (process_id,))


async def mark_stopped(conn: Connection, process_id: str) -> None:
    await conn.execute(
        "UPDATE worker_processes SET stopped_at = now(), last_beat_at = now() WHERE id = %s", (process_id,)
    )


# A process is running while it has not stopped and has beaten within BEATS_TO_DEAD beats.
_BEATING = "last_beat_at >= now() - make_interval(secs => %(dead_after)s)"
_STATUS = f"CASE WHEN stopped_at IS NOT NULL THEN 'stopped' WHEN {_BEATING} THEN 'running' ELSE 'dead' END"


async def worker_processes(conn: Connection, *, beat_s: float) -> list[WorkerProcess]:
    """Every process of the last day, newest first, with its status as of now."""
    return await fetch_all(
        conn,
        class_row(WorkerProcess),
        f"SELECT {columns(WorkerProcess, computed={'status': _STATUS})} FROM worker_processes"
        " WHERE last_beat_at >= now() - make_interval(days => %(kept)s) ORDER BY started_at DESC, id",
        {"dead_after": BEATS_TO_DEAD * beat_s, "kept": KEPT_DAYS},
    )


async def running_on(conn: Connection, host: str, *, beat_s: float) -> bool:
    """Whether a worker process of `host` (a container's own name) is running (the container probe)."""
    found = await fetch_one(
        conn,
        scalar_row,
        f"SELECT EXISTS (SELECT 1 FROM worker_processes WHERE host = %(host)s AND ({_STATUS}) = 'running')",
        {"host": host, "dead_after": BEATS_TO_DEAD * beat_s},
    )
    return bool(found)

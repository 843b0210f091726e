"""A worker process's liveness record (core/store/runs/workers.py): registered when it starts, its beat
renewed every WORKER_BEAT_S while its event loop runs, and marked stopped on a clean exit, so GET
/health/ready and the admin screen tell each process apart, and a killed one shows as dead within three
beats. arq's own `{queue}:health-check` key is one per queue: any live worker kept it fresh for all."""

import asyncio
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from psycopg import Error as DatabaseError
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from core.store.runs.workers import beat, mark_stopped, register_worker

log = logging.getLogger(__name__)


@asynccontextmanager
async def liveness_record(
    pool: AsyncConnectionPool, queues: Sequence[str], *, beat_s: float
) -> AsyncIterator[str]:
    """The process's record for the block; yields its id (host:pid:start time)."""
    host, pid = socket.gethostname(), os.getpid()
    process_id = f"{host}:{pid}:{int(time.time())}"
    async with pool.connection() as conn:
        await register_worker(conn, process_id, host=host, pid=pid, queues=list(queues))
    beating = asyncio.create_task(_beat(pool, process_id, beat_s), name="worker liveness")
    try:
        yield process_id
    finally:
        beating.cancel()
        try:
            async with pool.connection() as conn:
                await mark_stopped(conn, process_id)
        except (DatabaseError, PoolTimeout, OSError) as error:  # it will show as dead instead
            log.warning("could not mark worker %s stopped: %s", process_id, type(error).__name__)


async def _beat(pool: AsyncConnectionPool, process_id: str, beat_s: float) -> None:
    while True:
        await asyncio.sleep(beat_s)
        try:
            async with pool.connection() as conn:
                await beat(conn, process_id)
        except (DatabaseError, PoolTimeout, OSError) as error:  # the next beat tries again
            log.warning("worker %s could not renew its beat: %s", process_id, type(error).__name__)

"""scheduled_backup: the worker's hourly look at the backup schedule (core/backup/schedule.py), off
unless BACKUP_DIR is set."""

import asyncio
import logging
from datetime import UTC, datetime

import psycopg

from core.backup import BackupError
from core.backup.schedule import run_scheduled
from core.jobs.specs import SCHEDULED_BACKUP, ScheduledBackup
from core.runtime import Runtime
from workers.jobs.framework import FunctionJob, Result

log = logging.getLogger(__name__)
# One scheduled backup at a time across every worker of the database, on any machine: arq's unique
# cron covers one Redis only, and two index workers both run it at start-up.
_LOCK_KEY = 7_100_2031


async def _scheduled_backup(runtime: Runtime, args: ScheduledBackup) -> Result:
    settings = runtime.settings
    if settings.backup.dir is None:
        return {"status": "off"}
    database_url = runtime.urls.database_url
    # A connection of its own, not the pool's: it is held for as long as pg_dump runs.
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOCK_KEY,))).fetchone()
        if not (row and row[0]):
            return {"status": "running elsewhere"}
        try:
            # pg_dump and the tar are blocking work: off the event loop, which runs the other jobs.
            run = await asyncio.to_thread(run_scheduled, settings, database_url, datetime.now(UTC))
        except BackupError as error:
            log.error("scheduled backup failed: %s", error)
            return {"status": "failed", "error": str(error)}
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    if run.written is None:
        return {"status": "not due"}
    log.info(
        "scheduled backup written in %.1f s: %s (%d bytes); deleted %s",
        run.written.seconds,
        run.written.path,
        run.written.size_bytes,
        [path.name for path in run.deleted] or "none",
    )
    return {
        "status": "written",
        "path": str(run.written.path),
        "seconds": round(run.written.seconds, 1),
        "deleted": [path.name for path in run.deleted],
    }


scheduled_backup = FunctionJob(SCHEDULED_BACKUP, _scheduled_backup)

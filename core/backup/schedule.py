"""Scheduled backups with retention: the folder's file names are the schedule's only state, so a
restarted worker neither backs up twice nor forgets when the last backup was written."""

import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.backup.archive import BackupResult, write_backup
from core.settings import Settings

PREFIX = "studyai-backup-"
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"studyai-backup-(\d{8}T\d{6}Z)\.tar")


def backup_name(at: datetime) -> str:
    return f"{PREFIX}{at.astimezone(UTC).strftime(_STAMP)}.tar"


def backups(folder: Path) -> list[tuple[datetime, Path]]:
    """The complete scheduled backups in the folder, oldest first (a `.tmp` in progress is not one)."""
    found = []
    for path in folder.glob(f"{PREFIX}*.tar") if folder.is_dir() else ():
        match = _NAME.fullmatch(path.name)
        if match and path.is_file():
            found.append((datetime.strptime(match.group(1), _STAMP).replace(tzinfo=UTC), path))
    return sorted(found)


def is_due(folder: Path, interval: timedelta, now: datetime) -> bool:
    existing = backups(folder)
    return not existing or now - existing[-1][0] >= interval


def prune(folder: Path, keep: int) -> list[Path]:
    """Deletes all but the newest `keep` backups; the deleted ones, oldest first."""
    existing = [path for _, path in backups(folder)]
    doomed = existing[: max(len(existing) - keep, 0)]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


@dataclass(frozen=True)
class ScheduledRun:
    written: BackupResult | None  # None: not due, or scheduled backups are off
    deleted: list[Path]


def run_scheduled(settings: Settings, database_url: str, now: datetime) -> ScheduledRun:
    """One look at the schedule: writes a backup when the newest is BACKUP_INTERVAL_HOURS old, then,
    the new one complete, keeps the newest BACKUP_KEEP. The caller makes sure only one runs at once."""
    folder = settings.backup.dir
    if folder is None or not is_due(folder, timedelta(hours=settings.backup.interval_hours), now):
        return ScheduledRun(None, [])
    folder.mkdir(parents=True, exist_ok=True)
    # A crashed run's partial file and staging folder (runs never overlap, so none is in use).
    for leftover in folder.glob(f"{PREFIX}*.tar.tmp"):
        leftover.unlink(missing_ok=True)
    for staging in folder.glob(".studyai-backup-*"):
        shutil.rmtree(staging, ignore_errors=True)
    written = write_backup(settings, database_url, folder / backup_name(now))
    return ScheduledRun(written, prune(folder, settings.backup.keep))

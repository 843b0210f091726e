"""Running the server for a year: scheduled backups (core/backup/schedule.py, the worker's hourly cron)."""

from pathlib import Path

from pydantic import Field

from core.settings.group import SettingsGroup


class BackupSettings(SettingsGroup):
    # Unset: no scheduled backups (`studyai backup PATH` works either way).
    dir: Path | None = Field(default=None, validation_alias="BACKUP_DIR")
    # The worker checks hourly, so a backup is written within the hour after this much time has passed
    # since the newest one in the folder (the folder's file names are the schedule's only state).
    interval_hours: int = Field(default=24, ge=1, validation_alias="BACKUP_INTERVAL_HOURS")
    # Backups kept; older ones are deleted only once a new one is complete.
    keep: int = Field(default=7, ge=1, validation_alias="BACKUP_KEEP")

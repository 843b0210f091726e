"""Backup and restore of an instance: its database (pg_dump's custom format) and the data directory's
own small files in one tar with a manifest (README "Backup and restore")."""

from core.backup.archive import BackupResult, write_backup
from core.backup.errors import BackupError
from core.backup.restore import RestoreResult, restore_backup

__all__ = ["BackupError", "BackupResult", "RestoreResult", "restore_backup", "write_backup"]

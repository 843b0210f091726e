"""The backup schedule's retention, on files alone: which files are backups, when one is due, that
only the newest BACKUP_KEEP stay, and that nothing is deleted unless a new backup was completed.
(A real scheduled backup of a database: tests/backend/test_backup.py.)"""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.backup import BackupError, BackupResult
from core.backup import schedule as schedule_module
from core.backup.schedule import backup_name, backups, is_due, prune, run_scheduled
from core.settings import Settings

NOW = datetime(2026, 12, 5, 18, 0, 0, tzinfo=UTC)


def fill(folder: Path, ages_hours: list[int]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / backup_name(NOW - timedelta(hours=age)) for age in ages_hours]
    for path in paths:
        path.write_bytes(b"backup")
    return paths


def test_names_sort_by_time_and_only_complete_backups_count(tmp_path: Path) -> None:
    assert backup_name(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "studyai-backup-20260102T030405Z.tar"
    made = fill(tmp_path, [50, 2, 26])
    (tmp_path / (backup_name(NOW) + ".tmp")).write_bytes(b"half")  # a run in progress
    (tmp_path / "studyai-backup-notatime.tar").write_bytes(b"x")
    (tmp_path / "notes.txt").write_bytes(b"x")
    (tmp_path / backup_name(NOW - timedelta(hours=1))).mkdir()
    assert [path for _, path in backups(tmp_path)] == [made[0], made[2], made[1]]
    assert backups(tmp_path / "missing") == []


def test_a_backup_is_due_once_the_newest_is_the_interval_old(tmp_path: Path) -> None:
    day = timedelta(hours=24)
    assert is_due(tmp_path, day, NOW)  # none yet
    fill(tmp_path, [30, 23])
    assert not is_due(tmp_path, day, NOW)
    assert is_due(tmp_path, day, NOW + timedelta(hours=1))


def test_prune_keeps_the_newest(tmp_path: Path) -> None:
    made = fill(tmp_path, [5, 4, 3, 2, 1])
    assert prune(tmp_path, 3) == made[:2]
    assert [path for _, path in backups(tmp_path)] == made[2:]
    assert prune(tmp_path, 10) == []


def settings_for(folder: Path | None, keep: int = 2) -> Settings:
    return Settings(_env_file=None, BACKUP_DIR=folder, BACKUP_KEEP=keep, BACKUP_INTERVAL_HOURS=24)  # type: ignore[call-arg]


def test_old_backups_are_deleted_only_after_a_new_one_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "backups"
    old = fill(folder, [72, 48, 25])
    (folder / "studyai-backup-20000101T000000Z.tar.tmp").write_bytes(b"a crashed run's")

    def failing(settings: Settings, database_url: str, path: Path) -> BackupResult:
        raise BackupError("pg_dump failed")

    monkeypatch.setattr(schedule_module, "write_backup", failing)
    with pytest.raises(BackupError):
        run_scheduled(settings_for(folder), "postgresql://unused", NOW)
    assert all(path.exists() for path in old)  # a failed run deletes nothing

    def writing(settings: Settings, database_url: str, path: Path) -> BackupResult:
        path.write_bytes(b"new")
        return BackupResult(path, {}, 3, 0.1)

    monkeypatch.setattr(schedule_module, "write_backup", writing)
    run = run_scheduled(settings_for(folder), "postgresql://unused", NOW)
    assert run.written is not None and run.written.path == folder / backup_name(NOW)
    assert run.deleted == old[:2]
    assert [path for _, path in backups(folder)] == [old[2], folder / backup_name(NOW)]
    assert not list(folder.glob("*.tmp"))
    # Not due an hour later; off without BACKUP_DIR.
    assert (
        run_scheduled(settings_for(folder), "postgresql://unused", NOW + timedelta(hours=1)).written is None
    )
    assert run_scheduled(settings_for(None), "postgresql://unused", NOW).written is None

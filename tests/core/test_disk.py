"""What counts as a full disk, the reserve check, and what the Postgres watch reports (no server needed:
tests/backend/test_disk_full.py fills a real disk)."""

import errno
from pathlib import Path

import psycopg
import pytest

from core.runtime.disk import DISK_FULL_REASON, DiskSpaceLow, check_space, index_bytes, is_disk_full
from core.runtime.postgres_watch import stop_reason
from core.settings import Settings
from workers.jobs.index import IndexJob


def test_full_disk_errors_are_told_apart_from_others() -> None:
    assert is_disk_full(psycopg.errors.DiskFull("could not extend file"))
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert is_disk_full(DiskSpaceLow(1, 2, 3))
    # A PANIC on a WAL write reaches the client as the dying connection's message.
    assert is_disk_full(psycopg.OperationalError('could not write "pg_wal/x": No space left on device'))
    assert not is_disk_full(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))


def test_the_index_job_fails_a_full_disk_with_the_reason_at_once() -> None:
    failure = IndexJob().known_failure(psycopg.errors.DiskFull("could not extend file"))
    assert failure is not None and failure.reason == DISK_FULL_REASON
    assert "disk space" in DISK_FULL_REASON and "reindex" in DISK_FULL_REASON
    assert IndexJob().known_failure(psycopg.OperationalError("connection refused")) is None  # retried


def test_the_reserve_is_checked_on_the_embedded_databases_disk(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=tmp_path, DATABASE_URL=None)  # type: ignore[call-arg]
    check_space(settings, 1)
    huge = settings.with_values({"STORAGE_MIN_FREE_MB": 1024**3})  # more than any disk: refused
    with pytest.raises(DiskSpaceLow) as refused:
        check_space(huge, 1)
    assert refused.value.errno == errno.ENOSPC and "kept in reserve" in str(refused.value)
    external = huge.with_values({"DATABASE_URL": "postgresql://db.example/studyai"})
    check_space(external, 1)  # another machine's disk: not checked here
    (tmp_path / "pgdata").mkdir()
    (tmp_path / "pgdata" / "PG_VERSION").write_text("18")
    with pytest.raises(DiskSpaceLow):  # a worker handed the embedded server's URL checks it all the same
        check_space(external, 1)
    assert index_bytes(["x" * 1000] * 10) > 10 * 1000


def test_the_watch_says_why_postgres_stopped(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text('PANIC:  could not write to file "pg_wal/xlogtemp.9": No space left on device\n')
    assert "its disk is full" in stop_reason(log)
    log.write_text("LOG:  database system is shut down\n")
    assert stop_reason(log) == "it exited; see pgdata/log in the data directory"
    assert stop_reason(tmp_path / "missing") == "its log could not be read"

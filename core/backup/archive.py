"""Writes a backup: one tar holding manifest.json, database.dump (pg_dump's custom format, compressed
by pg_dump) and files/ (the data directory's own small files).

The tar itself is not compressed again: the dump, nearly all of a backup, is compressed already, and a
plain tar lets a reader check each member against the manifest's sha256 one by one."""

import hashlib
import importlib.metadata
import io
import json
import os
import tarfile
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from core.backup import postgres
from core.backup.errors import BackupError
from core.settings import Settings

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DUMP = "database.dump"
FILES = "files/"
# The data directory's own files worth keeping: calibrated thresholds and confidence, the LTI tool's
# signing key. Not pgdata (the dump holds it), models (re-assembled from packages), redis, logs.
DATA_DIR_FOLDERS = ("calibration", "lti")


@dataclass(frozen=True)
class BackupResult:
    path: Path
    manifest: dict[str, Any]
    size_bytes: int
    seconds: float


def write_backup(settings: Settings, database_url: str, path: Path) -> BackupResult:
    """A consistent backup of a running instance at `path` (refused if it exists). Written to
    `path.tmp` and renamed once complete: a crash never leaves a partial backup under `path`."""
    started = time.monotonic()
    if path.exists():
        raise BackupError(f"{path} exists: choose another name (a backup is never overwritten)")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    # The dump is staged next to the backup: the same disk, which must hold the backup anyway.
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".studyai-backup-") as work:
        dump = Path(work) / DUMP
        database = _dump_database(database_url, dump)
        files = data_dir_files(settings.services.data_dir)
        stored_models = database.pop("stored_models")
        members = {DUMP: _digest(dump), **{FILES + name: _digest(source) for name, source in files.items()}}
        manifest = {
            "format_version": FORMAT_VERSION,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "studyai_version": _version(),
            **database,
            "embedding": {
                "provider": settings.embeddings.provider,
                "model": settings.embeddings.model,
                "dimensions": settings.embeddings.dimensions,
                "stored_models": stored_models,
            },
            "members": members,
        }
        try:
            _write_tar(partial, manifest, dump, files)
        except FileExistsError:
            raise BackupError(
                f"{partial} exists: another backup is being written to {path.name}, or one crashed"
                " (then delete it)"
            ) from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, path)
    _sync_directory(path.parent)
    return BackupResult(path, manifest, path.stat().st_size, time.monotonic() - started)


def _dump_database(database_url: str, dump: Path) -> dict[str, Any]:
    """pg_dump of the database, and its description read in the very snapshot pg_dump dumps (its
    transaction exports it), so the manifest's row counts are the dump's exactly, while the API and
    the workers go on writing."""
    with psycopg.connect(database_url) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()
        assert snapshot is not None
        migrations = postgres.applied_migrations(conn)
        if not migrations:
            raise BackupError("the database has no studyAI schema (no schema_migrations): nothing to back up")
        server = conn.execute("SHOW server_version").fetchone()
        description = {
            "schema_version": migrations[-1],
            "migrations": migrations,
            "postgres_version": server[0] if server else None,
            "tables": postgres.row_counts(conn),
            "stored_models": postgres.stored_embedding_models(conn),
        }
        postgres.run_client(
            "pg_dump",
            "--format=custom",
            f"--snapshot={snapshot[0]}",
            f"--file={dump}",
            f"--dbname={database_url}",
        )
    return description


def data_dir_files(data_dir: Path) -> dict[str, Path]:
    """The files to keep, by their path relative to the data directory (regular files only)."""
    found: dict[str, Path] = {}
    for folder in DATA_DIR_FOLDERS:
        root = data_dir / folder
        if not root.is_dir() or root.is_symlink():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(data_dir).as_posix()] = path
    return found


def _digest(path: Path) -> dict[str, Any]:
    sha = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(1 << 20):
            sha.update(block)
    return {"sha256": sha.hexdigest(), "size": path.stat().st_size}


def _write_tar(target: Path, manifest: dict[str, Any], dump: Path, files: dict[str, Path]) -> None:
    body = json.dumps(manifest, indent=2, sort_keys=True).encode()
    with target.open("xb") as raw:
        os.fchmod(raw.fileno(), 0o600)  # it holds password hashes, key hashes and the LTI signing key
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(MANIFEST)  # first, so a reader knows what to expect before the rest
            info.size, info.mtime, info.mode = len(body), int(time.time()), 0o600
            tar.addfile(info, io.BytesIO(body))
            tar.add(dump, arcname=DUMP, recursive=False)
            for name, source in files.items():
                tar.add(source, arcname=FILES + name, recursive=False)
        raw.flush()
        os.fsync(raw.fileno())  # on disk before the rename makes it the backup


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)  # the rename itself survives a power cut
    finally:
        os.close(descriptor)


def _version() -> str:
    try:
        return importlib.metadata.version("studyai")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"

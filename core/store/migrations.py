"""Applies migrations/*.sql in name order, each once, each in its own transaction.

Written here rather than taken from a library because it is twenty lines and the migrations are
plain SQL files; an advisory lock keeps the API and the worker from applying them twice at once."""

from pathlib import Path

import psycopg

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_LOCK_KEY = 7_100_2024


def pending(conn: psycopg.Connection, directory: Path = MIGRATIONS_DIR) -> list[Path]:
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    return [path for path in sorted(directory.glob("*.sql")) if path.stem not in applied]


def apply_migrations(database_url: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    applied: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            for path in pending(conn, directory):
                with conn.transaction():
                    conn.execute(path.read_text())  # a trusted file from the repo
                    conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (path.stem,))
                applied.append(path.stem)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied

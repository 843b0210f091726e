"""Embedded services start idempotently and keep their data; migrations apply once."""

from pathlib import Path

import psycopg

from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql.migrations import MIGRATIONS_DIR, apply_migrations


def test_second_start_finds_existing_data(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=tmp_path, DATABASE_URL=None, REDIS_URL=None)  # type: ignore[call-arg]
    with EmbeddedServices(settings) as urls:
        assert apply_migrations(urls.database_url) == [p.stem for p in sorted(MIGRATIONS_DIR.glob("*.sql"))]
        with psycopg.connect(urls.database_url) as conn:
            conn.execute("INSERT INTO users (email) VALUES ('kept@example.org')")
        assert urls.redis_url.startswith("unix://")
    with EmbeddedServices(settings) as urls:
        assert apply_migrations(urls.database_url) == []
        with psycopg.connect(urls.database_url) as conn:
            assert conn.execute("SELECT count(*) FROM users").fetchone() == (1,)
            version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            assert version is not None and version[0] >= "0.8"


def test_external_urls_are_used_as_given(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        STUDYAI_DATA_DIR=tmp_path,
        DATABASE_URL="postgresql://db.example/x",
        REDIS_URL="redis://r:1",
    )
    with EmbeddedServices(settings) as urls:
        assert urls.database_url == "postgresql://db.example/x"
        assert urls.redis_url == "redis://r:1"
    assert not (tmp_path / "pgdata").exists()

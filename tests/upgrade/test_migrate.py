"""The upgrade's refusals and its dry run: a database newer than the code is not touched (the library, the
CLI, `studyai up` and the worker all refuse with one message), a failing migration rolls back alone and
names itself and the last applied one, and `studyai migrate --dry-run` lists what would run."""

import json
from pathlib import Path

import psycopg
import pytest

from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.sql.migrations import (
    MigrationFailed,
    SchemaNewerThanCode,
    apply_migrations,
    plan_migrations,
)
from tests.conftest import studyai
from tests.upgrade.history import HEAD, MIGRATIONS, scratch_database
from workers.main import run as run_worker

NEWER = (
    f"The database is at migration 9999_future, newer than this studyAI (latest {HEAD}): run the newer"
    " release, or restore a backup taken before the upgrade."
)


COLUMNS = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns"
    " WHERE table_schema = 'public' ORDER BY 1, 2"
)


def versions(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_a_newer_database_is_refused_everywhere(services: ServiceUrls, tmp_path: Path) -> None:
    with scratch_database(services.database_url) as url:
        apply_migrations(url)
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO schema_migrations (version) VALUES ('9999_future')")

        with pytest.raises(SchemaNewerThanCode) as refused:
            apply_migrations(url)
        assert str(refused.value) == NEWER
        assert (refused.value.database_version, refused.value.code_version) == ("9999_future", HEAD)
        with pytest.raises(SchemaNewerThanCode):
            plan_migrations(url)

        for command in (["migrate"], ["up", "--no-worker"]):
            result = studyai(*command, data_dir=tmp_path, database_url=url)
            assert result.returncode == 1, result.stderr
            assert NEWER in result.stderr and "Traceback" not in result.stderr

        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, STUDYAI_DATA_DIR=tmp_path, DATABASE_URL=url, REDIS_URL=services.redis_url
        )
        assert run_worker(settings, "index") == 1  # before it connects to Redis or takes a job
        assert versions(url) == sorted([*MIGRATIONS, "9999_future"])


def test_a_failing_migration_rolls_back_alone_and_says_where_it_stopped(
    services: ServiceUrls, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    (directory / "0001_first.sql").write_text("CREATE TABLE first (id int);")
    (directory / "0002_second.sql").write_text("CREATE TABLE second (id int);")
    # Its first statement succeeds; the second fails, so the whole file must be rolled back.
    (directory / "0003_third.sql").write_text("CREATE TABLE third (id int); INSERT INTO missing VALUES (1);")
    with scratch_database(services.database_url) as url:
        with pytest.raises(MigrationFailed) as failed:
            apply_migrations(url, directory)
        assert (failed.value.migration, failed.value.last_applied) == ("0003_third", "0002_second")
        assert "Migration 0003_third failed" in str(failed.value)
        assert 'relation "missing" does not exist' in str(failed.value)
        assert "stays at 0002_second" in str(failed.value)
        assert versions(url) == ["0001_first", "0002_second"]
        with psycopg.connect(url) as conn:
            tables = conn.execute("SELECT to_regclass('second'), to_regclass('third')").fetchone()
        assert tables == ("second", None)

        # Fixed, it applies on the next run: the advisory lock was released by the failed one.
        (directory / "0003_third.sql").write_text("CREATE TABLE third (id int);")
        assert apply_migrations(url, directory) == ["0003_third"]


def test_the_cli_reports_a_real_migration_that_fails(services: ServiceUrls, tmp_path: Path) -> None:
    """The head migration meets a database that refuses schema changes (an event trigger stands in for
    whatever breaks it in the field): the operator reads which migration failed and where the database
    stays, and nothing of it is left behind."""
    with scratch_database(services.database_url) as url:
        previous = MIGRATIONS[-2]
        apply_migrations(url, target=previous)
        with psycopg.connect(url, autocommit=True) as conn:
            columns = conn.execute(COLUMNS).fetchall()
            conn.execute(
                "CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'no schema change today'; END $$"
            )
            conn.execute("CREATE EVENT TRIGGER refuse_ddl ON ddl_command_start EXECUTE FUNCTION refuse_ddl()")

        result = studyai("migrate", data_dir=tmp_path, database_url=url)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert f"Migration {HEAD} failed and was rolled back: no schema change today" in result.stderr
        assert f"The database stays at {previous}" in result.stderr
        assert versions(url) == MIGRATIONS[:-1]
        with psycopg.connect(url) as conn:
            assert conn.execute(COLUMNS).fetchall() == columns


def test_dry_run_lists_what_would_run_and_changes_nothing(services: ServiceUrls, tmp_path: Path) -> None:
    with scratch_database(services.database_url) as url:
        empty = plan_migrations(url)
        assert (empty.current, empty.pending) == (None, MIGRATIONS)
        with psycopg.connect(url) as conn:  # a dry run on a new database creates nothing in it
            assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,)

        older = MIGRATIONS[-3]
        apply_migrations(url, target=older)
        result = studyai("migrate", "--dry-run", data_dir=tmp_path, database_url=url)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0] == f"current: {older}"
        assert lines[1:] == ["would apply 2:", f"  {MIGRATIONS[-2]}", f"  {HEAD}"]
        assert versions(url) == MIGRATIONS[:-2]

        result = studyai("migrate", data_dir=tmp_path, database_url=url)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"applied: {MIGRATIONS[-2]}, {HEAD}"
        assert versions(url) == MIGRATIONS


def test_an_eval_on_a_workdir_of_a_newer_release_is_refused_in_one_line(tmp_path: Path) -> None:
    """`studyai eval` runs on its own embedded Postgres in --workdir: one a newer release migrated is
    refused with the same line as the other commands, not a traceback."""
    data = tmp_path / "tiny"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "Ferns", "text": "Ferns spore."}))
    (data / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "How do ferns reproduce?"}))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    workdir = tmp_path / "workdir"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, STUDYAI_DATA_DIR=workdir, DATABASE_URL=None, REDIS_URL=None
    )
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        with psycopg.connect(urls.database_url) as conn:
            conn.execute("INSERT INTO schema_migrations (version) VALUES ('9999_future')")

    result = studyai("eval", "retrieval", "--data", str(data), "--workdir", str(workdir))
    assert result.returncode == 1, result.stderr
    assert NEWER in result.stderr and "Traceback" not in result.stderr

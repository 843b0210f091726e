"""Upgrades on real data (issue 31): a database filled era by era (each migration, then that era's fixture
written with that era's columns), upgraded to head, keeps every row and every value of every era, leaves
no job stuck, keeps DATA_MODEL's invariants, and searches the older chunks as before."""

import time

import psycopg
import pytest

from core.runtime.services import ServiceUrls
from core.store.sql.migrations import apply_migrations
from tests.upgrade.checks import (
    ENERGY_DOC,
    broken_rules,
    rewritten_by_data_migrations,
    searches,
    unfinished_in_fixtures,
    unfinished_jobs,
)
from tests.upgrade.history import (
    DERIVED_TABLES,
    FIXTURES_DIR,
    HEAD,
    MIGRATIONS,
    History,
    build_era,
    scratch_database,
    snapshot,
)

# Upgrades from older heads straight to this one; HEAD itself is the path taken one migration at a time.
OLDER_HEADS = ["0001_init", "0010_job_recovery", "0014_study_scheduling", "0017_course_formats"]
SEARCHABLE_FROM = "0009_lexeme_stats"  # the retriever's BM25 reads the lexeme statistics of 0009


def test_every_migration_has_a_fixture() -> None:
    """A new migration needs fixtures/NNNN_name.sql with rows of its era, so that the next release's
    upgrade is tried on data this one wrote."""
    fixtures = sorted(path.stem for path in FIXTURES_DIR.glob("*.sql"))
    assert [m for m in MIGRATIONS if m not in fixtures] == [], "migrations without an upgrade fixture"
    assert [f for f in fixtures if f not in MIGRATIONS] == [], "fixtures of no migration"


@pytest.mark.parametrize("older", [HEAD, *OLDER_HEADS])
async def test_upgrade_keeps_rows_jobs_and_searches(services: ServiceUrls, older: str) -> None:
    with scratch_database(services.database_url) as url:
        history = History()
        build_era(url, older, history)
        before = await searches(url, bm25=older >= SEARCHABLE_FROM)

        started = time.perf_counter()
        applied = apply_migrations(url)
        print(
            f"upgrade {older} -> {HEAD}: {len(applied)} migrations in {time.perf_counter() - started:.2f} s"
        )
        assert applied == [m for m in MIGRATIONS if m > older]

        with psycopg.connect(url, autocommit=True) as conn:
            head = snapshot(conn)
            assert history.differences(head, MIGRATIONS) == []
            assert {t: len(rows) for t, rows in head.items()} == {t: history.count(t) for t in head}
            assert unfinished_jobs(conn) == unfinished_in_fixtures(history) != set()
            assert broken_rules(conn) == {}
            assert rewritten_by_data_migrations(conn, history) == []
            versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
            assert versions == MIGRATIONS
            if older == HEAD:
                # A fixture that inserts nothing, or a table no fixture fills, lets an upgrade pass untried.
                assert sorted(set(history.era.values())) == MIGRATIONS
                assert [t for t, rows in head.items() if not rows and t not in DERIVED_TABLES] == []

        after = await searches(url)
        assert after["bm25"][0][:2] == (ENERGY_DOC, 0)  # the photosynthesis chunk
        assert after["exact"][0][:2] == (ENERGY_DOC, 0)
        assert after["hnsw"] == after["exact"]
        assert {name: after[name] for name in before} == before  # the older chunks, found as before

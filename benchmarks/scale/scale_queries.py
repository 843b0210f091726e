"""The scale benchmark's queries: projects sampled per size bucket, queries aimed at a chunk or a topic,
each run through the retriever (or its dense stage alone) and scored against an exact search."""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from uuid import UUID

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings
from pgvector.psycopg import register_vector

from benchmarks.scale.scale_data import Corpus
from benchmarks.scale.scale_load import project_index
from core.observability import timing
from core.retrieval.dense import DenseCandidates, dense_candidates, project_chunk_count
from core.retrieval.rerankers.none import FusedOrder
from core.retrieval.retriever import Retriever
from core.retrieval.types import Filters, RetrievalResult
from core.settings.retrieval import RetrievalSettings
from core.store.sql.pool import open_pool

TOP_K = 10
BUCKETS: tuple[tuple[str, int, float], ...] = (
    ("<100", 0, 100),
    ("100-1k", 100, 1_000),
    ("1k-10k", 1_000, 10_000),
    ("10k-100k", 10_000, 100_000),
    (">=100k", 100_000, float("inf")),
)


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


Measure = Callable[[Query], Awaitable[Outcome]]  # one query run and scored


async def run_queries(
    database_url: str,
    queries: Sequence[Query],
    config: RetrievalSettings,
    *,
    user_id: UUID | None,
    warmup: int = 30,
    dense_only: bool = False,
) -> list[Outcome]:
    """Each query through the retriever, scored. With dense_only, the dense stage alone, in the
    retriever's transaction and settings, for sweeping its knobs without paying for the lexical side."""
    pool = await open_pool(database_url, min_size=1, max_size=1 if dense_only else 2)
    try:
        if dense_only:
            async with pool.connection() as conn:
                return await _warm_then_measure(queries, warmup, _dense_stage(conn, config, user_id))
        return await _warm_then_measure(queries, warmup, _whole_search(pool, config, user_id))
    finally:
        await pool.close()


run_dense_queries = partial(run_queries, dense_only=True)


async def _warm_then_measure(queries: Sequence[Query], warmup: int, measure: Measure) -> list[Outcome]:
    """The first `warmup` queries touch the plans and the hot pages, untimed; then every query counts."""
    for query in queries[:warmup]:
        await measure(query)
    return [await measure(query) for query in queries]


def _whole_search(pool: Any, config: RetrievalSettings, user_id: UUID | None) -> Measure:
    embeddings = PrecomputedQuery()
    retriever = Retriever(pool, embeddings, FusedOrder(), config)

    async def measure(query: Query) -> Outcome:
        embeddings.vector = query.vector
        return score(query, await _search(retriever, query, user_id), config)

    return measure


def _dense_stage(conn: Any, config: RetrievalSettings, user_id: UUID | None) -> Measure:
    async def measure(query: Query) -> Outcome:
        started = timing.mark()
        dense = await _dense(conn, query, config, user_id)
        return _dense_outcome(query, dense, timing.elapsed_ms(started), config)

    return measure


async def _dense(conn: Any, query: Query, config: RetrievalSettings, user_id: UUID | None) -> DenseCandidates:
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        size = await project_chunk_count(conn, project_id=query.project.id)
        await conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {int(config.hnsw_max_scan_tuples)}")
        return await dense_candidates(
            conn,
            project_id=query.project.id,
            query_vector=query.vector,
            filters=Filters(),
            user_id=user_id,
            depth=config.candidate_depth,
            exact_below=config.exact_below,
            ef_search=config.hnsw_ef_search,
            project_size=size,
        )


def _dense_outcome(query: Query, scan: DenseCandidates, ms: float, config: RetrievalSettings) -> Outcome:
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


def score(query: Query, result: RetrievalResult, config: RetrievalSettings) -> Outcome:
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
    config: RetrievalSettings,
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
        variant_config = config.model_copy(update={"exact_below": exact_below})
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

"""Evaluates retrieval systems query by query with the shared Retriever, ranking corpus ids.

One fused search per query yields the BM25, dense and RRF lists; each configured reranker runs its
own search (so its latency is real); a blend-weight sweep rescores the hydrated candidates of the
fused search, which is exactly what a blend search would rerank."""

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.embeddings import Embeddings
from psycopg_pool import AsyncConnectionPool

from core.observability import timing
from core.retrieval import Candidate, Retriever
from core.retrieval.rerankers.base import Reranker
from core.retrieval.rerankers.blend import ScoreBlend
from core.retrieval.rerankers.factory import make_reranker
from core.retrieval.rerankers.none import FusedOrder
from core.settings import Settings
from evals.retrieval.beir import Qrels
from evals.retrieval.metrics import QueryMetrics, evaluate_ranking, mean_metrics

LEXICAL, DENSE, HYBRID, BLEND = "lexical (BM25)", "dense (e5)", "hybrid (RRF)", "hybrid + blend"
DEPTH = 100  # documents ranked per system: Recall@100 needs the first hundred

_CHUNK_DOCUMENTS = "SELECT id, document_id FROM chunks WHERE project_id = %(project_id)s"


@dataclass
class SystemResult:
    name: str
    per_query: dict[str, QueryMetrics] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)

    def add(self, query_id: str, ranking: list[str], judged: Mapping[str, int], latency_ms: float) -> None:
        self.per_query[query_id] = evaluate_ranking(ranking, judged)
        self.latencies_ms.append(latency_ms)

    @property
    def metrics(self) -> QueryMetrics:
        return mean_metrics(list(self.per_query.values()))

    @property
    def mean_latency_ms(self) -> float:
        return sum(self.latencies_ms) / max(len(self.latencies_ms), 1)


def configured_rerankers(settings: Settings) -> list[tuple[str, Reranker]]:
    """The blend at its configured weight, plus the model rerankers only where they are configured."""
    chosen = [(BLEND, make_reranker(settings, "blend"))]
    if settings.retrieval.cross_encoder_model:
        chosen.append(("hybrid + cross-encoder", make_reranker(settings, "cross-encoder")))
    if settings.retrieval.rerank_url:
        chosen.append(("hybrid + http", make_reranker(settings, "http")))
    return chosen


async def chunk_corpus_ids(
    pool: AsyncConnectionPool, *, project_id: UUID, documents: Mapping[str, str]
) -> dict[int, str]:
    """chunk id -> corpus id for every chunk of the project, read once after loading."""
    corpus_of = {str(document_id): corpus_id for corpus_id, document_id in documents.items()}
    async with pool.connection() as conn:
        cur = await conn.execute(_CHUNK_DOCUMENTS, {"project_id": project_id})
        rows = await cur.fetchall()
    return {
        row["id"]: corpus_of[str(row["document_id"])] for row in rows if str(row["document_id"]) in corpus_of
    }


def corpus_ranking(
    candidates: Iterable[Candidate], corpus_of: Mapping[int, str], depth: int = DEPTH
) -> list[str]:
    """A document ranks where its best chunk ranks: the first occurrence wins."""
    ranked: dict[str, None] = {}
    for candidate in candidates:
        corpus_id = corpus_of.get(candidate.chunk_id)
        if corpus_id is not None:
            ranked.setdefault(corpus_id, None)
            if len(ranked) == depth:
                break
    return list(ranked)


async def evaluate_queries(
    retriever: Retriever,
    *,
    project_id: UUID,
    queries: Mapping[str, str],
    qrels: Qrels,
    corpus_of: Mapping[int, str],
    rerankers: Sequence[tuple[str, Reranker]] = (),
    blend_weights: Sequence[float] = (),
    log: Callable[[str], None] = print,
    progress_seconds: float = 30.0,
    on_progress: Callable[[int, list[SystemResult]], None] | None = None,
) -> list[SystemResult]:
    """`on_progress(done, results so far)` runs with each progress line, e.g. to keep a partial report."""
    names = [LEXICAL, DENSE, HYBRID, *(name for name, _ in rerankers), *map(blend_label, blend_weights)]
    results = {name: SystemResult(name) for name in names}
    # The model's first call pays one-off set-up; keep it out of the first query's latency.
    await asyncio.to_thread(retriever.embeddings.embed_query, "warm-up")
    # The rerank searches reuse the query vector of the fused search; their latency adds its cost back.
    remembered = RememberedQuery(retriever.embeddings)
    retriever = Retriever(retriever.pool, remembered, retriever.reranker, retriever.config)
    started = last_report = time.monotonic()
    for done, (query_id, query) in enumerate(queries.items(), 1):
        judged = qrels.get(query_id, {})

        def record(name: str, candidates: Iterable[Candidate], latency_ms: float) -> None:
            # Called only within this iteration, so the loop variables it reads are the current ones.
            results[name].add(query_id, corpus_ranking(candidates, corpus_of), judged, latency_ms)  # noqa: B023

        fused = await retriever.search(
            project_id=project_id, query=query, profile="search", top_k=DEPTH, reranker=FusedOrder()
        )
        timings = fused.timings
        record(LEXICAL, fused.lexical, timings.lexical_ms)
        record(DENSE, fused.dense, timings.embed_ms + timings.dense_ms)
        record(HYBRID, fused.fused, timings.total_ms)
        for name, reranker in rerankers:
            answer = await retriever.search(
                project_id=project_id, query=query, profile="search", top_k=DEPTH, reranker=reranker
            )
            record(name, answer.results, answer.timings.total_ms + timings.embed_ms)
        for weight in blend_weights:
            mark = timing.mark()
            rescored = await rescore(ScoreBlend(weight), query, fused.reranked)
            rescoring_ms = timing.elapsed_ms(mark)
            record(blend_label(weight), rescored, timings.total_ms - timings.rerank_ms + rescoring_ms)
        now = time.monotonic()
        if now - last_report >= progress_seconds:
            last_report = now
            log(f"evaluated {done}/{len(queries)} queries in {(now - started) / 60:.1f} min")
            if on_progress is not None:
                on_progress(done, [results[name] for name in names])
    return [results[name] for name in names]


class RememberedQuery(Embeddings):
    """Embeds each distinct query once in a row of searches for it; passages pass straight through."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self._last: tuple[str, list[float]] | None = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        if self._last is None or self._last[0] != text:
            self._last = (text, self.inner.embed_query(text))
        return self._last[1]


def blend_label(weight: float) -> str:
    return f"hybrid + blend w={weight:g}"


async def rescore(reranker: Reranker, query: str, candidates: list[Candidate]) -> list[Candidate]:
    """The order Retriever.search would give with `reranker` (same tie-break), without mutating."""
    scores = await reranker.score(query, candidates)
    order = sorted(
        zip(scores, candidates, strict=True), key=lambda p: (-p[0], -p[1].fused_score, p[1].chunk_id)
    )
    return [candidate for _, candidate in order]


def markdown_table(results: Sequence[SystemResult]) -> str:
    lines = [
        "| system | nDCG@10 | Recall@10 | Recall@100 | MRR@10 | mean latency (ms) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for result in results:
        m = result.metrics
        lines.append(
            f"| {result.name} | {m.ndcg_10:.4f} | {m.recall_10:.4f} | {m.recall_100:.4f} | {m.mrr_10:.4f}"
            f" | {result.mean_latency_ms:.1f} |"
        )
    return "\n".join(lines)


def markdown_report(
    results: Sequence[SystemResult], meta: Mapping[str, Any], notes: Sequence[str] = ()
) -> str:
    """The table plus what it takes to reproduce it: command, date, dataset, settings."""
    header = [f"# Retrieval evaluation: {meta.get('dataset', '?')}", ""]
    header += [f"- **{key}**: {value}" for key, value in meta.items()]
    return "\n".join([*header, "", markdown_table(results), "", *notes]).rstrip() + "\n"

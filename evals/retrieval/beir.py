"""Readers for the BEIR layout: corpus.jsonl {_id, title, text}, queries*.jsonl {_id, text} and
qrels*.tsv with a `query-id corpus-id score` header."""

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

Qrels = dict[str, dict[str, int]]  # query id -> corpus id -> relevance grade


@dataclass(frozen=True)
class BeirDocument:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    name: str
    corpus: dict[str, BeirDocument]  # in file order, so uploads and reports are reproducible
    queries: dict[str, str]
    qrels: Qrels

    def judged_queries(self) -> dict[str, str]:
        """Only queries with at least one relevant document count, as in BEIR's own evaluation."""
        return {
            qid: text
            for qid, text in self.queries.items()
            if any(grade > 0 for grade in self.qrels.get(qid, {}).values())
        }


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from error


def load_corpus_file(path: Path) -> dict[str, BeirDocument]:
    corpus: dict[str, BeirDocument] = {}
    for row in _jsonl(path):
        doc_id = str(row["_id"])
        corpus[doc_id] = BeirDocument(
            id=doc_id, title=str(row.get("title") or ""), text=str(row.get("text") or "")
        )
    return corpus


def load_queries(path: Path) -> dict[str, str]:
    return {str(row["_id"]): str(row["text"]) for row in _jsonl(path)}


def load_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header is None or [h.strip() for h in header[:3]] != ["query-id", "corpus-id", "score"]:
            raise ValueError(f"{path}: expected a 'query-id corpus-id score' header, got {header!r}")
        for row in reader:
            if not row or not "".join(row).strip():
                continue
            query_id, corpus_id, score = (cell.strip() for cell in row[:3])
            qrels.setdefault(query_id, {})[corpus_id] = int(float(score))
    return qrels


def load_dataset(
    directory: Path, *, queries: str = "queries.jsonl", qrels: str = "qrels/test.tsv"
) -> BeirDataset:
    """`queries` and `qrels` are file names relative to `directory` (absolute paths work too)."""
    return BeirDataset(
        name=directory.resolve().name,
        corpus=load_corpus_file(directory / "corpus.jsonl"),
        queries=load_queries(directory / queries),
        qrels=load_qrels(directory / qrels),
    )

"""Ranking metrics with the BEIR / pytrec_eval definitions, one ranked list of corpus ids at a time.

nDCG@k: gain = relevance grade, discount log2(rank + 1), normalised by the ideal ordering of all
judged grades. Recall@k: relevant ids in the top k over all relevant ids. MRR@k: 1 / rank of the
first relevant id within the top k, else 0. Grades <= 0 count as not relevant (trec_eval's
relevance level 1). Repeated ids in a ranking count once, at their first position."""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

METRIC_NAMES = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


def _unique(ranking: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def ndcg_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    gains = [max(grade, 0) for grade in qrels.values()]
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True)[:k]))
    if ideal <= 0:
        return 0.0
    dcg = sum(max(qrels.get(doc, 0), 0) / math.log2(i + 2) for i, doc in enumerate(_unique(ranking)[:k]))
    return dcg / ideal


def recall_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    relevant = {doc for doc, grade in qrels.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_unique(ranking)[:k])) / len(relevant)


def mrr_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    for rank, doc in enumerate(_unique(ranking)[:k], 1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


@dataclass(frozen=True)
class QueryMetrics:
    ndcg_10: float
    recall_10: float
    recall_100: float
    mrr_10: float

    def as_dict(self) -> dict[str, float]:
        return dict(zip(METRIC_NAMES, (getattr(self, f.name) for f in fields(self)), strict=True))


def evaluate_ranking(ranking: Sequence[str], qrels: Mapping[str, int]) -> QueryMetrics:
    return QueryMetrics(
        ndcg_10=ndcg_at(ranking, qrels, 10),
        recall_10=recall_at(ranking, qrels, 10),
        recall_100=recall_at(ranking, qrels, 100),
        mrr_10=mrr_at(ranking, qrels, 10),
    )


def mean_metrics(per_query: Sequence[QueryMetrics]) -> QueryMetrics:
    """Macro average over queries, as BEIR reports; an empty list averages to zeros."""
    count = max(len(per_query), 1)
    return QueryMetrics(*(sum(getattr(m, f.name) for m in per_query) / count for f in fields(QueryMetrics)))

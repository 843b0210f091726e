"""Figures per group of cases (dataset x kind) and overall, as a Markdown table and a chart."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evals.qa.run import QARecord
from evals.qa.scoring import CaseScore
from evals.tables import table_lines


@dataclass(frozen=True)
class GroupFigures:
    name: str
    cases: int
    accuracy: float
    not_found_rate: float  # replies with has_answer false
    citation_precision: float | None  # cited chunks holding the evidence / cited chunks
    cited_share: float  # answered replies with at least one citation
    retrieval_hit: float | None  # evidence among the retrieved chunks
    # Answers whose first cited passage was among those shown while the model worked, over the cited
    # answers that had such passages: what the student read first is what the answer rests on.
    first_cited_shown: float | None
    groundedness: float | None  # mean judge score over answered replies, when judged
    flagged: float | None  # share of judged replies flagged as a hallucination risk
    p50_ms: float
    p95_ms: float
    ttft_p50_ms: float | None
    ttft_p95_ms: float | None
    errors: int


def figures(
    name: str,
    records: Sequence[QARecord],
    scores: Mapping[str, CaseScore],
    hits: Mapping[str, bool],
    judged: Mapping[str, tuple[float, bool]] | None = None,
) -> GroupFigures:
    done = [r for r in records if r.error is None]
    answered = [r for r in done if r.has_answer]
    cited = sum(scores[r.case_id].cited for r in done)
    on_target = sum(scores[r.case_id].cited_on_target for r in done)
    totals = [r.total_ms for r in done]
    ttfts = [r.ttft_ms for r in done if r.ttft_ms is not None]
    with_hits = [hits[r.case_id] for r in done if r.case_id in hits]
    grounded = [judged[r.case_id] for r in answered if judged and r.case_id in judged]
    shown = [r.cited_ids[0] in r.shown_ids for r in answered if r.cited_ids and r.shown_ids]
    return GroupFigures(
        name=name,
        cases=len(records),
        accuracy=_share(sum(scores[r.case_id].correct for r in done), len(records)),
        not_found_rate=_share(sum(not r.has_answer for r in done), len(done)),
        citation_precision=on_target / cited if cited else None,
        cited_share=_share(sum(bool(r.cited_ids) for r in answered), len(answered)),
        retrieval_hit=float(np.mean(with_hits)) if with_hits else None,
        first_cited_shown=float(np.mean(shown)) if shown else None,
        groundedness=float(np.mean([g for g, _ in grounded])) if grounded else None,
        flagged=float(np.mean([f for _, f in grounded])) if grounded else None,
        p50_ms=_pct(totals, 50),
        p95_ms=_pct(totals, 95),
        ttft_p50_ms=_pct(ttfts, 50) if ttfts else None,
        ttft_p95_ms=_pct(ttfts, 95) if ttfts else None,
        errors=len(records) - len(done),
    )


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _sec(ms: float | None) -> str:
    return "–" if ms is None else f"{ms / 1000:.1f}"


COLUMNS = [
    "group", "cases", "accuracy", "not found", "citation precision", "answers cited", "retrieval hit",
    "first cited shown", "groundedness", "flagged", "p50 s", "p95 s", "TTFT p50 s", "TTFT p95 s", "errors",
]  # fmt: skip


def _cells(r: GroupFigures) -> list[str]:
    return [
        r.name, str(r.cases), _fmt(r.accuracy), _fmt(r.not_found_rate), _fmt(r.citation_precision),
        _fmt(r.cited_share), _fmt(r.retrieval_hit), _fmt(r.first_cited_shown), _fmt(r.groundedness),
        _fmt(r.flagged),
        _sec(r.p50_ms), _sec(r.p95_ms), _sec(r.ttft_p50_ms), _sec(r.ttft_p95_ms), str(r.errors),
    ]  # fmt: skip


def markdown_table(rows: Sequence[GroupFigures]) -> str:
    return "\n".join(table_lines(COLUMNS, [_cells(r) for r in rows], figures=True))


def markdown_report(
    title: str, rows: Sequence[GroupFigures], meta: Mapping[str, str], notes: Sequence[str]
) -> str:
    parts = [f"# {title}", "", *(f"- **{k}**: {v}" for k, v in meta.items()), "", markdown_table(rows), ""]
    parts += [f"- {note}" for note in notes]
    return "\n".join(parts) + "\n"


def write_chart(rows: Sequence[GroupFigures], records: Sequence[QARecord], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server
    import matplotlib.pyplot as plt

    figure, (quality, latency) = plt.subplots(1, 2, figsize=(14, 5))
    names = [r.name for r in rows]
    series = {
        "accuracy": [r.accuracy for r in rows],
        "citation precision": [r.citation_precision or 0.0 for r in rows],
        "retrieval hit": [r.retrieval_hit or 0.0 for r in rows],
        "groundedness": [r.groundedness or 0.0 for r in rows],
    }
    width = 0.8 / len(series)
    for offset, (label, values) in enumerate(series.items()):
        quality.bar([i + (offset - 1.5) * width for i in range(len(names))], values, width, label=label)
    quality.set_xticks(range(len(names)), names, rotation=25, ha="right")
    quality.set_ylim(0, 1)
    quality.set_title("Quality per group")
    quality.legend(loc="lower right", fontsize=8)
    done = [r for r in records if r.error is None]
    latency.hist([r.total_ms / 1000 for r in done], bins=20, alpha=0.7, label="whole answer")
    latency.hist(
        [r.ttft_ms / 1000 for r in done if r.ttft_ms is not None], bins=20, alpha=0.7, label="first token"
    )
    latency.set_xlabel("seconds")
    latency.set_ylabel("questions")
    latency.set_title("Latency")
    latency.legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)

"""Where a RAG answer's time goes with the embedded models: time to first token and total, p50/p95,
per stage (planning, retrieval, prefill, generation), with prompt token counts, per kind of question.

    python -m benchmarks.load.qa_latency [--rust-limit 12] [--faquad-limit 6] [--records PATH]

Asks a sample of the development QA cases through the real stack (the same runner as `python -m
evals.qa`: embedded Postgres, Redis and chat model, a worker, the API over HTTP, streamed), one at a
time, then writes benchmarks/reports/qa_latency.md and .png. Run it on an idle machine: the figures
are wall-clock. `--records` summarises the records of an earlier run instead of asking again."""

import argparse
import shlex
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.report import REPORTS, write_report
from evals.qa.__main__ import main as run_qa_eval
from evals.qa.run import QARecord, read_records

REPO_ROOT = Path(__file__).resolve().parents[2]
STAGES = ("planning", "retrieval", "prefill", "generation")


def percentile(values: Sequence[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def stages(record: QARecord) -> dict[str, float]:
    """Seconds per stage of one reply. Prefill is the answer step's time to its first token (for a
    question with options, the scoring of the options, after which the chosen option is shown);
    generation is the rest of the answer step."""
    ms = record.stage_ms
    first = ms.get("first_token", ms.get("choice", ms.get("generation", 0.0)))
    return {
        "planning": ms.get("planning", 0.0) / 1000,
        "retrieval": ms.get("retrieval", 0.0) / 1000,
        "prefill": first / 1000,
        "generation": max(0.0, ms.get("generation", 0.0) - first) / 1000,
    }


def prompt_tokens(record: QARecord) -> int:
    """Prompt tokens of all the reply's model calls, cached prefix included (llama-server reports usage
    for streamed completions too; llama-cpp-python's server, in older records, did not)."""
    return sum(int(usage.get("input_tokens", 0)) for usage in record.tokens.values())


def prefilled(record: QARecord) -> int:
    """Prompt tokens of all the reply's model calls that the server had not cached: what it prefilled."""
    return sum(
        int(usage.get("input_tokens", 0)) - int(usage.get("cached_input_tokens", 0))
        for usage in record.tokens.values()
    )


def first_call_uncached(record: QARecord) -> int | None:
    """Prompt tokens of the reply's first model call that the server had not cached: for a standalone
    question, its prompt after the shared system prompt (None in records from before it was counted)."""
    counts = [usage.get("first_call_uncached_tokens") for usage in record.tokens.values()]
    return next((int(n) for n in counts if n is not None), None)


def summary_rows(records: Sequence[QARecord]) -> list[dict[str, object]]:
    groups: dict[str, list[QARecord]] = {}
    for record in records:
        if record.error is None:
            groups.setdefault(record.kind, []).append(record)
            groups.setdefault("all", []).append(record)
    rows = []
    for kind, group in sorted(groups.items(), key=lambda item: (item[0] == "all", item[0])):
        ttft = [r.ttft_ms / 1000 for r in group if r.ttft_ms is not None]
        total = [r.total_ms / 1000 for r in group]
        row: dict[str, object] = {"kind": kind, "n": len(group)}
        for name, values in (("ttft", ttft), ("total", total)):
            row[f"{name} p50"], row[f"{name} p95"] = percentile(values, 0.5), percentile(values, 0.95)
        for stage in STAGES:
            row[f"{stage} p50"] = percentile([stages(r)[stage] for r in group], 0.5)
        row["prompt tokens p50"] = percentile([prompt_tokens(r) for r in group], 0.5)
        row["prefilled tokens p50"] = percentile([prefilled(r) for r in group], 0.5)
        after_prefix = [n for r in group if (n := first_call_uncached(r)) is not None]
        row["first call after cached prefix p50"] = percentile(after_prefix, 0.5)
        row["... p95"] = percentile(after_prefix, 0.95)
        evidence = [r.evidence_ms / 1000 for r in group if r.evidence_ms is not None]
        row["evidence p50"], row["evidence p95"] = percentile(evidence, 0.5), percentile(evidence, 0.95)
        row["model calls p50"] = percentile(
            [sum(int(u.get("calls", 0)) for u in r.tokens.values()) for r in group], 0.5
        )
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, object]], command: str, records: int) -> str:
    headers = list(rows[0]) if rows else []
    lines = [
        "# RAG QA latency with the embedded models",
        "",
        f"- **command**: `{command}`",
        f"- **replies**: {records}, asked one at a time, streamed over HTTP",
        "- seconds; prefill = the answer step's time to its first token (options: their scoring),"
        " generation = the rest of it; prompt tokens = of all the reply's model calls, the server's cached"
        " prefix included; prefilled tokens = of those, the ones the server had not cached; first call"
        " after cached prefix = the tokens the reply's first model call had to"
        " prefill (the server had the rest cached); evidence = time to the stream's `evidence` event",
        "",
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" if h == "kind" else "---:" for h in headers) + "|",
    ]
    for row in rows:
        cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [str(r["kind"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4))
    left = [0.0] * len(rows)
    for stage in STAGES:
        widths = [float(r[f"{stage} p50"] or 0.0) for r in rows]  # type: ignore[arg-type]
        ax.barh(kinds, widths, left=left, label=stage)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.scatter([float(r["ttft p50"] or 0) for r in rows], kinds, color="black", zorder=3, label="TTFT p50")  # type: ignore[arg-type]
    ax.set_xlabel("seconds (p50 per stage)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.load.qa_latency", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rust-limit", type=int, default=12)
    parser.add_argument("--faquad-limit", type=int, default=6)
    parser.add_argument("--workdir", type=Path, default=REPO_ROOT / ".cache" / "evals" / "qa")
    parser.add_argument("--records", type=Path, help="summarise these records instead of asking")
    parser.add_argument("--report", type=Path, default=REPORTS / "qa_latency")
    args = parser.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    command = shlex.join(["python", "-m", "benchmarks.load.qa_latency", *given])
    records_path = args.records
    if records_path is None:
        report = args.workdir / "latency-eval"
        run_qa_eval(
            [
                "--rust-limit", str(args.rust_limit), "--faquad-limit", str(args.faquad_limit),
                "--workdir", str(args.workdir), "--report", str(report),
            ]
        )  # fmt: skip
        records_path = args.workdir / "records.jsonl"
    records = read_records(records_path)
    rows = summary_rows(records)
    write_report(args.report, markdown(rows, command.strip(), len(records)), data=rows)
    plot(rows, args.report.with_suffix(".png"))
    print(markdown(rows, command.strip(), len(records)))
    print(f"p50 TTFT {statistics.median([r.ttft_ms or 0 for r in records]) / 1000:.2f} s")


if __name__ == "__main__":
    main()

"""The QA gate's thresholds, read off the whole development material and checked on a part not tuned on.

    python -m evals.gate [--faquad-articles 6] [--report evals/reports/gate-dev.md]

The gate (agents/qa/gate.py) decides from retrieval alone, so no chat model runs: every case is
retrieved exactly as the QA graph retrieves it, its signals (best dense cosine, share of its content
words in the best chunks) are recorded, and thresholds are swept. Cases: every single-answer
multiple-choice and short-answer quiz of the Rust book's chapters 1-9, FaQuAD questions of several
articles, and the absent questions of evals/qa/datasets.py (far and near misses). Split: Rust chapters
1, 3, 5, 7, 9, the first half of the FaQuAD articles and every other absent question tune; the rest
checks. The choice: the most absent questions refused on the tuning part while at most
`--max-answerable-refused` of its answerable questions are, ties to the loosest thresholds; then the
floor below dense_min for questions all of whose words the best chunks hold (`sweep_floor`)."""

import argparse
import asyncio
import itertools
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from agents.qa.config import DEFAULT_CONFIG
from agents.qa.gate import decide, judge
from agents.qa.nodes import search_text
from agents.qa.options import parse_choice, question_stem
from core.embeddings.thresholds import CALIBRATED, Thresholds
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import stop_worker
from evals.qa.datasets import QACase, QADataset, absent_cases, faquad, rust_quizzes
from evals.qa.run import load_project
from evals.stack import REPO_ROOT, api_session, liveness_check, start_eval_worker, workdir_settings

EVAL_USER = "qa-evals@studyai.local"


@dataclass(frozen=True)
class Signals:
    case: QACase
    part: str  # "tune" or "check"
    answerable: bool
    choice: bool
    best_dense: float
    coverage: float
    complete: bool  # every content word of the question is in the best chunks


def part_of(case: QACase, dataset: QADataset, index: int) -> str:
    if case.kind == "absent":
        return "tune" if index % 2 == 0 else "check"
    if case.dataset == "faquad":
        articles = sorted({name for name in dataset.corpus.files})
        first_half = articles[: len(articles) // 2 or 1]
        holders = [n for n, text in dataset.corpus.files.items() if any(a in text for a in case.answers)]
        return "tune" if holders and holders[0] in first_half else "check"
    chapter = int(case.id[2:4])
    return "tune" if chapter % 2 == 1 else "check"


def passes(signal: Signals, thresholds: Thresholds, coverage_min: float) -> bool:
    passed, _ = decide(
        signal.best_dense, signal.coverage, signal.complete, coverage_min, thresholds, choice=signal.choice
    )
    return passed


def rates(signals: list[Signals], thresholds: Thresholds, coverage_min: float) -> dict[str, float]:
    answerable = [s for s in signals if s.answerable]
    absent = [s for s in signals if not s.answerable]
    refused = sum(not passes(s, thresholds, coverage_min) for s in answerable)
    caught = sum(not passes(s, thresholds, coverage_min) for s in absent)
    return {
        "answerable": len(answerable),
        "answerable refused": refused / max(1, len(answerable)),
        "absent": len(absent),
        "absent refused": caught / max(1, len(absent)),
    }


def sweep(signals: list[Signals], max_refused: float, base: Thresholds) -> tuple[Thresholds, float]:
    """The thresholds refusing most absent questions with at most `max_refused` of the answerable
    refused; among equals, fewer answerable refused, then the loosest (lowest) thresholds."""
    best: tuple[tuple[float, ...], Thresholds, float] | None = None
    grid_min = [round(0.70 + 0.005 * i, 3) for i in range(33)]
    grid_strong = [round(0.84 + 0.005 * i, 3) for i in range(25)]
    grid_cover = [round(0.2 + 0.05 * i, 2) for i in range(13)]
    for minimum, strong, cover in itertools.product(grid_min, grid_strong, grid_cover):
        if strong <= minimum:
            continue
        thresholds = replace(
            base, gate_dense_min=minimum, gate_dense_strong=strong, gate_dense_floor=None, source="evals.gate"
        )
        figures = rates(signals, thresholds, cover)
        if figures["answerable refused"] > max_refused:
            continue
        key = (figures["absent refused"], -figures["answerable refused"], -minimum, -strong, -cover)
        if best is None or key > best[0]:
            best = (key, thresholds, cover)
    return (base, DEFAULT_CONFIG.coverage_min) if best is None else (best[1], best[2])


def sweep_floor(signals: list[Signals], chosen: Thresholds, coverage_min: float) -> Thresholds:
    """Below dense_min, the floor for questions all of whose words the best chunks hold: the tightest
    that lets the most answerable questions through without letting through one absent question more
    than no floor does (None when no floor lets any answerable one through)."""
    without = rates(signals, replace(chosen, gate_dense_floor=None), coverage_min)
    best, best_refused = None, without["answerable refused"]
    for floor in (round(chosen.gate_dense_min - 0.005 * i, 3) for i in range(1, 21)):
        figures = rates(signals, replace(chosen, gate_dense_floor=floor), coverage_min)
        if figures["absent refused"] < without["absent refused"]:
            break
        if figures["answerable refused"] < best_refused:
            best, best_refused = floor, figures["answerable refused"]
    return replace(chosen, gate_dense_floor=best)


async def collect(args: argparse.Namespace, settings: Settings) -> list[Signals]:
    datasets = [
        rust_quizzes(args.data, chapters=range(1, 10)),
        faquad(args.data, articles=args.faquad_articles, limit=10_000, seed=args.seed),
    ]
    for dataset in datasets:
        dataset.cases.extend(absent_cases(dataset.corpus))
    signals: list[Signals] = []
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        worker = start_eval_worker(urls, settings)
        try:
            async with api_session(settings, urls, email=EVAL_USER, key_name="gate-evals") as session:
                for dataset in datasets:
                    project = await load_project(
                        session.http, session.headers, dataset.corpus, args.workdir / "projects.json",
                        health_check=liveness_check(worker, settings),
                    )  # fmt: skip
                    for index, case in enumerate(dataset.cases):
                        result = await session.runtime.retriever.search(
                            project_id=project,
                            query=search_text(case.question),
                            profile=DEFAULT_CONFIG.profile,
                        )
                        choice = parse_choice(case.question) is not None
                        decision = judge(
                            question_stem(case.question), result.results, DEFAULT_CONFIG,
                            CALIBRATED[settings.embeddings.model], choice=choice,
                        )  # fmt: skip
                        signals.append(
                            Signals(case, part_of(case, dataset, index), case.kind != "absent", choice,
                                    decision.best_dense, decision.coverage,
                                    decision.complete)
                        )  # fmt: skip
        finally:
            stop_worker(worker)
    return signals


def _named(thresholds: Thresholds, cover: float) -> str:
    limits = f"{thresholds.gate_dense_min}/{thresholds.gate_dense_strong}/{cover}"
    return f"{limits}, floor {thresholds.gate_dense_floor}"


def report(
    signals: list[Signals], chosen: Thresholds, cover: float, args: argparse.Namespace, current: Thresholds
) -> str:
    lines = [
        "# QA gate thresholds on the development material",
        "",
        f"- **embedding model**: {current.source.removeprefix('table: ')}",
        f"- **command**: `{' '.join(['python -m evals.gate', *sys.argv[1:]])}`",
        f"- cases: {len(signals)} ({sum(s.answerable for s in signals)} answerable,"
        f" {sum(not s.answerable for s in signals)} absent); tuned on `tune`, checked on `check`",
        f"- chosen on `tune` (at most {args.max_answerable_refused:.0%} of answerable refused): dense_min"
        f" {chosen.gate_dense_min}, dense_strong {chosen.gate_dense_strong}, coverage_min {cover}; then the"
        f" floor for questions with every word in the best chunks: {chosen.gate_dense_floor}",
        "",
        "| thresholds | part | answerable | answerable refused | absent | absent refused |",
        "|---|---|---:|---:|---:|---:|",
    ]
    without_floor = replace(current, gate_dense_floor=None)
    for name, thresholds, coverage_min in (
        ("current", current, DEFAULT_CONFIG.coverage_min),
        ("current without floor", without_floor, DEFAULT_CONFIG.coverage_min),
        ("chosen", chosen, cover),
    ):
        name = f"{name} ({_named(thresholds, coverage_min)})"
        for part in ("tune", "check"):
            figures = rates([s for s in signals if s.part == part], thresholds, coverage_min)
            lines.append(
                f"| {name} | {part} | {figures['answerable']:.0f} | {figures['answerable refused']:.3f} |"
                f" {figures['absent']:.0f} | {figures['absent refused']:.3f} |"
            )
    lines += ["", "Refused by kind of question, both parts (chosen thresholds):", ""]
    for kind in sorted({s.case.kind for s in signals}):
        group = [s for s in signals if s.case.kind == kind]
        refused = sum(not passes(s, chosen, cover) for s in group)
        lines.append(f"- {kind}: {refused} of {len(group)}")
    lines += ["", "Absent questions with their signals (best dense, coverage):", ""]
    for s in sorted((s for s in signals if not s.answerable), key=lambda s: -s.best_dense):
        lines.append(f"- {s.part}: {s.best_dense:.3f}, {s.coverage:.2f} — {s.case.question}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.gate", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--faquad-articles", type=int, default=6)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-answerable-refused", type=float, default=0.03)
    parser.add_argument("--workdir", type=Path, default=REPO_ROOT / ".cache" / "evals" / "qa")
    parser.add_argument("--report", type=Path, default=REPO_ROOT / "evals" / "reports" / "gate-dev.md")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    settings = workdir_settings(args.workdir)
    signals = asyncio.run(collect(args, settings))
    current = CALIBRATED[settings.embeddings.model]
    tune = [s for s in signals if s.part == "tune"]
    chosen, cover = sweep(tune, args.max_answerable_refused, current)
    chosen = sweep_floor(tune, chosen, cover)
    text = report(signals, chosen, cover, args, current)
    args.report.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

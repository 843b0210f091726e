"""The calibration's figures (out of fold, thresholds chosen inside each fold) and its report: a table
per kind and over all replies, each signal's contribution, and two plots."""

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from core.confidence.fit import NIL_GAIN, Sample, feature_names, nested_labels, select_features
from core.confidence.model import Calibration
from evals.calibration.metrics import (
    BINS,
    Contribution,
    LabelFigures,
    auroc,
    contributions,
    ece,
    label_figures,
)


@dataclass(frozen=True)
class KindOutcome:
    kind: str
    samples: list[Sample]
    p: list[float]
    labels: list[str]
    figures: LabelFigures
    ece: float
    auroc: float | None
    all_signals: Contribution
    without: list[Contribution]
    kept: tuple[str, ...]  # the signals the fit keeps (core/confidence/fit.py select_features)


@dataclass(frozen=True)
class Outcome:
    kinds: list[KindOutcome]
    overall: LabelFigures
    overall_ece: float
    asked: dict[str, int]


def answerable(asked: dict[str, int], kind: str | None = None) -> int:
    """Questions a reply of `kind` could be right on (every QA kind but absent; every graded answer)."""

    def wanted(group: str) -> bool:
        if group.endswith("/ absent"):
            return False
        if group.startswith("grading /"):
            return kind == "grade"
        if kind is None:  # every QA kind
            return True
        return kind != "grade" and group.endswith("/ multiple_choice") == (kind == "choice")

    return sum(count for group, count in asked.items() if wanted(group))


def evaluate(samples: list[Sample], asked: dict[str, int]) -> Outcome:
    kinds: list[KindOutcome] = []
    for kind in sorted({s.kind for s in samples}):
        mine = [s for s in samples if s.kind == kind]
        features = feature_names(mine)
        # The labels as the stored fit gives them: over the signals it keeps (chosen on all records).
        kept = select_features(mine, features)
        p, labels = nested_labels(mine, kept)
        right = [s.right for s in mine]
        every, without = contributions(mine, features)
        kinds.append(
            KindOutcome(
                kind, mine, p, list(labels), label_figures(mine, labels, answerable(asked, kind)),
                ece(p, right), auroc(p, right), every, without, kept,
            )
        )  # fmt: skip
    answers = [k for k in kinds if k.kind != "grade"]  # "all" is over the QA replies; grades apart
    everything = [s for k in answers for s in k.samples]
    labels = [label for k in answers for label in k.labels]
    p = [value for k in answers for value in k.p]
    return Outcome(
        kinds,
        label_figures(everything, labels, answerable(asked)),
        ece(p, [s.right for s in everything]),
        asked,
    )


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _row(name: str, figures: LabelFigures, ece_value: float, auroc_value: float | None) -> str:
    return (
        f"| {name} | {figures.replies} | {figures.answerable} | {_share(ece_value)} | {_share(auroc_value)}"
        f" | {figures.high} | {_share(figures.high_precision)} | {figures.high_coverage:.3f}"
        f" | {figures.confidently_wrong} ({figures.confidently_wrong_share:.3f}) | {figures.absent_high}"
        f" | {figures.low} ({figures.low_right} right) |"
    )


def write_report(
    outcome: Outcome, calibration: Calibration, report: Path, *, command: str, records: list[Path]
) -> None:
    lines = [
        "# Answer confidence: calibration on the development questions",
        "",
        f"- **command**: {command}",
        f"- **date**: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        f"- **records**: {', '.join(p.name for p in records)} (scored evals.qa runs)",
        f"- **chat model**: {calibration.chat_model}; **embedding**: {calibration.embedding_model}",
        f"- **questions asked**: {', '.join(f'{g} {n}' for g, n in sorted(outcome.asked.items()))}",
        "",
        "Every figure is out of fold: 5-fold cross-validation, the label thresholds chosen on each",
        "training part alone (nested), so each reply is labelled as an unseen one would be, over the",
        "signals the fit keeps (those whose leaving out raises the out-of-fold log loss by more than",
        f"{NIL_GAIN}, chosen on all records; the rest are not computed, and their model calls not made).",
        "",
        "| kind | replies | answerable asked | ECE | AUROC | high | high right | high covers answerable"
        " | confidently wrong (of answerable) | absent high | low |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in outcome.kinds:
        lines.append(_row(kind.kind, kind.figures, kind.ece, kind.auroc))
    lines.append(_row("all answers", outcome.overall, outcome.overall_ece, None))
    lines += ["", "## Each signal's out-of-fold contribution", ""]
    for kind in outcome.kinds:
        lines += [
            f"**{kind.kind}** — all signals: log loss {kind.all_signals.log_loss:.3f},"
            f" AUROC {_share(kind.all_signals.auroc)}. Without each one:",
            "",
            "| left out | log loss | Δ log loss | AUROC |",
            "|---|---:|---:|---:|",
        ]
        for item in kind.without:
            delta = item.log_loss - kind.all_signals.log_loss
            lines.append(f"| {item.signal} | {item.log_loss:.3f} | {delta:+.3f} | {_share(item.auroc)} |")
        lines += ["", f"Kept: {', '.join(kind.kept) or 'none (the share right as a constant)'}.", ""]
    lines += ["## The fitted calibration (all records)", ""]
    for name, model in calibration.kinds.items():
        weights = ", ".join(f"{f} {w:+.2f}" for f, w in zip(model.features, model.coefficients, strict=True))
        lines.append(
            f"- **{name}**: high ≥ {model.high_min:.3f}, low < {model.low_below:.3f};"
            f" intercept {model.intercept:+.2f}; weights (standardised): {weights}"
        )
    lines += ["", f"Fitted as: {calibration.fitted_on}", ""]
    report.with_suffix(".md").write_text("\n".join(lines) + "\n")
    _plot(outcome, report.with_suffix(".png"))


def _plot(outcome: Outcome, path: Path) -> None:
    fig, (risk, reliability) = plt.subplots(1, 2, figsize=(11, 4.5))
    for kind in outcome.kinds:
        ranked = sorted(zip(kind.p, (s.right for s in kind.samples), strict=True), key=lambda i: -i[0])
        coverage = [(n + 1) / len(ranked) for n in range(len(ranked))]
        errors = [sum(not ok for _, ok in ranked[: n + 1]) / (n + 1) for n in range(len(ranked))]
        risk.plot(coverage, errors, label=f"{kind.kind} ({len(ranked)})")
        bins = _reliability_points(kind.p, [s.right for s in kind.samples])
        reliability.plot([b[0] for b in bins], [b[1] for b in bins], marker="o", label=kind.kind)
    risk.set(xlabel="coverage (replies answered, most confident first)", ylabel="error rate",
             title="Risk–coverage (out of fold)")  # fmt: skip
    reliability.plot([0, 1], [0, 1], linestyle="--", color="grey")
    reliability.set(xlabel="predicted probability right", ylabel="observed share right",
                    title="Reliability (out of fold)", xlim=(0, 1), ylim=(0, 1))  # fmt: skip
    risk.legend()
    reliability.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _reliability_points(p: list[float], right: list[bool]) -> list[tuple[float, float]]:
    """(mean p, share right) of each non-empty bin of p."""
    points = []
    for b in range(BINS):
        inside = [
            (value, ok) for value, ok in zip(p, right, strict=True) if min(int(value * BINS), BINS - 1) == b
        ]
        if inside:
            points.append(
                (sum(v for v, _ in inside) / len(inside), sum(ok for _, ok in inside) / len(inside))
            )
    return points

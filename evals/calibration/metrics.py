"""What the calibration must show: calibration error, how often "high" is right and how much it
covers, AUROC, confidently wrong replies, and each signal's out-of-fold contribution."""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import log_loss, roc_auc_score

from core.confidence.fit import Sample, oof_probabilities

BINS = 10


def ece(p: Sequence[float], right: Sequence[bool], bins: int = BINS) -> float:
    """Expected calibration error: the replies' share-weighted gap between mean p and accuracy per bin."""
    p_arr, y = np.asarray(p, dtype=float), np.asarray(right, dtype=float)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for low, high in itertools.pairwise(edges):
        inside = (p_arr >= low) & ((p_arr < high) if high < 1 else (p_arr <= high))
        if inside.any():
            total += inside.mean() * abs(p_arr[inside].mean() - y[inside].mean())
    return float(total)


def auroc(p: Sequence[float], right: Sequence[bool]) -> float | None:
    return float(roc_auc_score(right, p)) if len(set(right)) == 2 else None


@dataclass(frozen=True)
class LabelFigures:
    replies: int  # answered replies (samples)
    answerable: int  # answerable questions asked, answered or not
    high: int
    high_right: int
    high_answerable: int  # high-labelled replies to answerable questions
    confidently_wrong: int  # wrong and high, answerable questions
    absent_high: int
    low: int
    low_right: int

    @property
    def high_precision(self) -> float | None:
        return self.high_right / self.high if self.high else None

    @property
    def high_coverage(self) -> float:
        return self.high_answerable / self.answerable if self.answerable else 0.0

    @property
    def confidently_wrong_share(self) -> float:
        return self.confidently_wrong / self.answerable if self.answerable else 0.0


def label_figures(samples: Sequence[Sample], labels: Sequence[str], answerable: int) -> LabelFigures:
    def absent(sample: Sample) -> bool:
        return sample.group.endswith("/ absent")

    high = [s for s, label in zip(samples, labels, strict=True) if label == "high"]
    low = [s for s, label in zip(samples, labels, strict=True) if label == "low"]
    return LabelFigures(
        replies=len(samples),
        answerable=answerable,
        high=len(high),
        high_right=sum(s.right for s in high),
        high_answerable=sum(not absent(s) for s in high),
        confidently_wrong=sum(not s.right and not absent(s) for s in high),
        absent_high=sum(absent(s) for s in high),
        low=len(low),
        low_right=sum(s.right for s in low),
    )


@dataclass(frozen=True)
class Contribution:
    signal: str
    log_loss: float  # out-of-fold, without this signal
    auroc: float | None


def contributions(
    samples: Sequence[Sample], features: Sequence[str]
) -> tuple[Contribution, list[Contribution]]:
    """Out-of-fold log loss and AUROC with every signal, then with each one left out: a signal whose
    removal raises the loss carries information the others do not."""
    right = [s.right for s in samples]

    def scored(names: Sequence[str], label: str) -> Contribution:
        p = oof_probabilities(samples, names)
        return Contribution(label, float(log_loss(right, p, labels=[False, True])), auroc(p, right))

    return scored(features, "all"), [scored([f for f in features if f != name], name) for name in features]

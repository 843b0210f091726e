"""Agreement of the evaluator's grades with the labels, on the ordinal scale 0 < 1 < 2, with
scikit-learn (the dev extra). Wrapped so the eval's choices are in one place: macro-F1 averages the
grades that occur in the labels or the predictions, a precision or recall with nothing to divide by
counts 0; quadratic weighted kappa is NaN where chance alone would agree fully."""

import math
import warnings
from collections.abc import Sequence

from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

GRADES = (0, 1, 2)  # incorrect (and off topic), partially correct, correct


def accuracy(gold: Sequence[int], predicted: Sequence[int]) -> float:
    _check(gold, predicted)
    return float(accuracy_score(gold, predicted))


def macro_f1(gold: Sequence[int], predicted: Sequence[int]) -> float:
    _check(gold, predicted)
    return float(f1_score(gold, predicted, average="macro", zero_division=0))


def quadratic_weighted_kappa(gold: Sequence[int], predicted: Sequence[int]) -> float:
    """Cohen's kappa with quadratic weights (i - j)^2: 1 is full agreement, 0 what chance gives, and a
    grade two steps off costs four times one step off."""
    _check(gold, predicted)
    with warnings.catch_warnings():  # the undefined case (0/0) warns; NaN says it in the report
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(gold, predicted, labels=list(GRADES), weights="quadratic"))
    return value if math.isfinite(value) else float("nan")


def _check(gold: Sequence[int], predicted: Sequence[int]) -> None:
    if not gold or len(gold) != len(predicted):
        raise ValueError(f"need as many predictions as labels, at least one ({len(gold)}, {len(predicted)})")
    if not set(gold) | set(predicted) <= set(GRADES):
        raise ValueError(f"grades are {GRADES}")

"""The grading eval's agreement figures (scikit-learn, as evals/grading/metrics.py calls it) against
values worked out by hand, including the edge cases the report relies on."""

import math

import pytest

from evals.grading.metrics import accuracy, macro_f1, quadratic_weighted_kappa


def test_accuracy_is_the_share_of_exact_grades() -> None:
    assert accuracy([0, 1, 2, 2], [0, 2, 2, 1]) == 0.5
    assert accuracy([2], [2]) == 1.0


def test_macro_f1_averages_the_grades_in_use() -> None:
    # grade 0: P 1/1, R 1/1 -> 1; grade 1: P 0/1, R 0/1 -> 0; grade 2: P 1/2, R 1/2 -> 0.5.
    assert macro_f1([0, 1, 2, 2], [0, 2, 2, 1]) == pytest.approx((1 + 0 + 0.5) / 3)
    # Grade 1 appears nowhere: it is not averaged in. Grade 0: P 1/2, R 1 -> 2/3; grade 2: P 1, R 1/2 -> 2/3.
    assert macro_f1([0, 2], [0, 0]) == pytest.approx(1 / 3)  # grade 2 never predicted: F1 0
    assert macro_f1([0, 2, 2], [0, 0, 2]) == pytest.approx(2 / 3)


def test_quadratic_kappa_by_hand() -> None:
    # Observed off-diagonal cells (1,2) and (2,1), weight 1 each: 2. Marginals (1,1,2) on both sides,
    # expected weighted disagreement sum_ij (i-j)^2 * m_i * m_j / 4 = (2*1*1*1 + 2*4*1*2 + 2*1*1*2) / 4 = 5.5.
    assert quadratic_weighted_kappa([0, 1, 2, 2], [0, 2, 2, 1]) == pytest.approx(1 - 2 / 5.5)
    assert quadratic_weighted_kappa([0, 1, 2], [0, 1, 2]) == 1.0


def test_kappa_punishes_two_steps_more_than_one() -> None:
    gold = [0, 0, 1, 1, 2, 2]
    one_step = quadratic_weighted_kappa(gold, [0, 0, 1, 1, 2, 1])
    two_steps = quadratic_weighted_kappa(gold, [0, 0, 1, 1, 2, 0])
    assert 0 < two_steps < one_step < 1
    # Systematically reversed grades agree worse than chance.
    assert quadratic_weighted_kappa(gold, [2, 2, 1, 1, 0, 0]) < 0


def test_kappa_is_undefined_when_both_sides_use_one_grade() -> None:
    assert math.isnan(quadratic_weighted_kappa([1, 1], [1, 1]))
    assert quadratic_weighted_kappa([1, 1], [0, 2]) == 0.0  # one side constant: chance level


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        accuracy([], [])
    with pytest.raises(ValueError):
        macro_f1([0, 1], [0])
    with pytest.raises(ValueError):
        quadratic_weighted_kappa([0, 3], [0, 1])

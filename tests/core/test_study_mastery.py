"""The mastery model (core/study/mastery.py): BKT over attempt scores blended with retrievability."""

import pytest

from core.study.mastery import BktParams, bkt, histogram, topic_mastery, topic_of


def test_bkt_moves_with_evidence() -> None:
    params = BktParams()
    assert bkt([]) == params.prior
    assert bkt([1.0]) > params.prior
    assert bkt([0.0]) < bkt([1.0])
    assert bkt([1.0, 1.0, 1.0]) > bkt([1.0]) > 0.5
    assert bkt([1.0, 1.0, 0.0]) < bkt([1.0, 1.0, 1.0])
    # a partial score lies between a right and a wrong answer
    assert bkt([0.0]) < bkt([0.5]) < bkt([1.0])
    # one right answer from the prior, by hand: posterior 0.2*0.9/(0.2*0.9+0.8*0.2), then learning
    posterior = 0.18 / (0.18 + 0.16)
    assert bkt([1.0]) == pytest.approx(posterior + (1 - posterior) * 0.15)


def test_topic_mastery_blends_memory_and_attempts() -> None:
    assert topic_mastery([], 4, []) == 0.0
    assert topic_mastery([1.0, 1.0], 4, []) == pytest.approx(0.5)  # half the topic held in memory
    # three attempts weigh half
    assert topic_mastery([1.0] * 4, 4, [0.0] * 3) == pytest.approx(0.5 * bkt([0.0] * 3) + 0.5)
    assert topic_mastery([0.9] * 4, 4, [1.0] * 6) > topic_mastery([0.9] * 4, 4, [0.0] * 6)


def test_topic_and_histogram() -> None:
    assert topic_of(["Book", "Ownership", "Moves"]) == ("Book", "Ownership")
    assert topic_of([]) == ()
    assert histogram([0.0, 0.19, 0.2, 0.5, 0.99, 1.0]) == [2, 1, 1, 0, 2]

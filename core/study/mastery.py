"""Mastery per topic: Bayesian Knowledge Tracing over graded attempts, blended with FSRS retrievability.

Topic: the first two levels of an item's section path (a document's title heading and its chapter,
or a chapter and its section); items without a section path form the topic [].

For one student and one topic:
- r = sum of the current retrievability of the topic's items / number of the topic's items
  (an item never studied counts 0): how much of the topic memory holds right now.
- b = BKT's P(known) after the student's graded attempts at the topic's items, oldest first. Each
  attempt is soft evidence weighted by its score s: P(L | obs) = s·P(L | right) + (1-s)·P(L | wrong),
  then the learning step P(L) += (1 - P(L))·learn. Parameters: prior 0.2, learn 0.15, slip 0.1, guess 0.2.
- mastery = w·b + (1-w)·r with w = a / (a + 3), a = the number of attempts: with no attempt mastery is
  memory alone, and graded answers weigh more the more there are (half at three attempts)."""

from collections.abc import Sequence
from dataclasses import dataclass

TOPIC_DEPTH = 2
ATTEMPTS_HALF_WEIGHT = 3.0
HISTOGRAM_BUCKETS = 5


@dataclass(frozen=True)
class BktParams:
    prior: float = 0.2
    learn: float = 0.15
    slip: float = 0.1
    guess: float = 0.2


def topic_of(section_path: Sequence[str]) -> tuple[str, ...]:
    return tuple(section_path[:TOPIC_DEPTH])


def bkt(scores: Sequence[float], params: BktParams = BktParams()) -> float:
    """P(known) after these attempt scores (0..1), oldest first."""
    known = params.prior
    for score in scores:
        right = known * (1 - params.slip) / (known * (1 - params.slip) + (1 - known) * params.guess)
        wrong = known * params.slip / (known * params.slip + (1 - known) * (1 - params.guess))
        posterior = score * right + (1 - score) * wrong
        known = posterior + (1 - posterior) * params.learn
    return known


def topic_mastery(retrievabilities: Sequence[float], items: int, scores: Sequence[float]) -> float:
    """`retrievabilities` of the studied items of a topic of `items` items; `scores` of its attempts."""
    memory = sum(retrievabilities) / items if items else 0.0
    weight = len(scores) / (len(scores) + ATTEMPTS_HALF_WEIGHT)
    return weight * bkt(scores) + (1 - weight) * memory


def histogram(values: Sequence[float]) -> list[int]:
    """Counts in [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1]."""
    counts = [0] * HISTOGRAM_BUCKETS
    for value in values:
        counts[min(HISTOGRAM_BUCKETS - 1, max(0, int(value * HISTOGRAM_BUCKETS)))] += 1
    return counts

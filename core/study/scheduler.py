"""FSRS via the fsrs package: a stored card <-> fsrs.Card, one review, retrievability at a time.

Fuzzing is off: a due date is a pure function of the card's history and the clock, so the queue is
reproducible (and testable against fsrs's own Scheduler); a class's daily loads do not need spreading.
fsrs 6 has no "new" state: an item without a card row is new, and its first review creates the card."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fsrs import Card, Rating, ReviewLog, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

from core.store.study.study import StudyCard

FSRS_LEARNING_STEPS = (timedelta(minutes=1), timedelta(minutes=10))  # fsrs's own default
# One 10-minute step: a new card answered Good (or Easy) goes to fsrs's schedule at once, one failed
# (Again) or Hard comes back the same day (10 / 15 min). On the simulated class
# (benchmarks/models/study_sim.py, development seed 7) fsrs's own two steps cost exam mode 1,482 reviews per
# learner against 1,181 with this one, for 0.952 against 0.950 recall at the exam.
LEARNING_STEPS = (timedelta(minutes=10),)
STATE_NAMES = {State.Learning: "learning", State.Review: "review", State.Relearning: "relearning"}


def make_scheduler(
    parameters: Sequence[float] | None = None,
    desired_retention: float = 0.9,
    learning_steps: Sequence[timedelta] = LEARNING_STEPS,
) -> Scheduler:
    """fsrs's defaults (a 10 min relearning step) but one 10 min learning step (LEARNING_STEPS), with
    the student's own fitted parameters when they have some."""
    return Scheduler(
        parameters=tuple(parameters) if parameters else DEFAULT_PARAMETERS,
        desired_retention=desired_retention,
        learning_steps=tuple(learning_steps),
        enable_fuzzing=False,
    )


@dataclass(frozen=True)
class StoredCard:
    """A card as stored: fsrs's Card plus the counters fsrs 6 does not keep."""

    card: Card
    reps: int
    lapses: int
    created_at: datetime


def stored_card(row: StudyCard | None) -> StoredCard | None:
    """From the store's card; None when the item is new."""
    if row is None:
        return None
    card = Card(
        card_id=0,
        state=State(row.state),
        step=row.step,
        stability=row.stability,
        difficulty=row.difficulty,
        due=row.due.astimezone(UTC),  # fsrs wants UTC; the driver gives the session's zone
        last_review=row.last_review.astimezone(UTC),
    )
    return StoredCard(card, reps=row.reps, lapses=row.lapses, created_at=row.created_at)


def study_card(stored: StoredCard) -> StudyCard:
    """The card as the store writes it."""
    card = stored.card
    assert card.last_review is not None  # a stored card has been reviewed
    return StudyCard(
        state=int(card.state),
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due,
        last_review=card.last_review,
        reps=stored.reps,
        lapses=stored.lapses,
        created_at=stored.created_at,
    )


def review(
    scheduler: Scheduler, stored: StoredCard | None, rating: Rating, now: datetime
) -> tuple[StoredCard, ReviewLog]:
    """The card after one review at `now` (UTC). A lapse is an Again on a card in the review state."""
    card = stored.card if stored else Card(card_id=0, due=now)
    new_card, log = scheduler.review_card(card, rating, review_datetime=now)
    lapsed = card.state == State.Review and rating == Rating.Again
    reps, lapses = (stored.reps, stored.lapses) if stored else (0, 0)
    created = stored.created_at if stored else now
    return StoredCard(new_card, reps=reps + 1, lapses=lapses + int(lapsed), created_at=created), log


def retrievability(scheduler: Scheduler, card: Card, at: datetime) -> float:
    """fsrs's predicted probability of recall at `at` (whole days elapsed, as fsrs counts them)."""
    return float(scheduler.get_card_retrievability(card, current_datetime=at))


def card_out(scheduler: Scheduler, stored: StoredCard | None, now: datetime) -> dict[str, Any]:
    """The API's CardOut fields."""
    if stored is None:
        return {
            "state": "new",
            "due": None,
            "stability": None,
            "difficulty": None,
            "retrievability": None,
            "reps": 0,
            "lapses": 0,
            "last_review": None,
        }
    card = stored.card
    return {
        "state": STATE_NAMES[card.state],
        "due": card.due,
        "stability": card.stability,
        "difficulty": card.difficulty,
        "retrievability": retrievability(scheduler, card, now),
        "reps": stored.reps,
        "lapses": stored.lapses,
        "last_review": card.last_review,
    }

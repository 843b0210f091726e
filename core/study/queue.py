"""The study queue's order, and exam mode.

Due cards come first, then new items up to the day's budget. Without an exam date the most overdue
card (earliest `due`) leads. In exam mode (an exam date today or later) a card's due date is exam mode's
plan (core/study/exam.py, passed in as `Candidate.due`) and due cards are ordered by their predicted
retrievability at the exam, lowest first: when a student cannot do everything that is due, what would
be forgotten by the exam goes first. The exam is taken to start at 00:00 UTC of its date.

predicted_retention: the mean fsrs retrievability at the exam of the items the student has studied
(0 when none yet); items never studied are not counted (the queue reports how many remain new)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from fsrs import Scheduler

from core.study.scheduler import StoredCard, retrievability


@dataclass(frozen=True)
class Candidate:
    """An item the student may study, with their card (None: new to them)."""

    item_id: Any
    card: StoredCard | None
    due: datetime | None = None  # exam mode's planned due date (core/study/exam.py); None: the card's

    @property
    def due_at(self) -> datetime | None:
        """When the item is due: None for a new item."""
        if self.card is None:
            return None
        return self.due if self.due is not None else self.card.card.due


def exam_start(exam_date: date | None, now: datetime) -> datetime | None:
    """The exam's moment, or None when there is no exam date or it has passed."""
    if exam_date is None:
        return None
    moment = datetime.combine(exam_date, time(0, 0), tzinfo=UTC)
    return moment if moment >= now.replace(hour=0, minute=0, second=0, microsecond=0) else None


def is_due(candidate: Candidate, now: datetime) -> bool:
    due = candidate.due_at
    return due is not None and due <= now


def order_queue(
    candidates: Sequence[Candidate],
    *,
    scheduler: Scheduler,
    now: datetime,
    new_budget_left: int,
    limit: int,
    exam_at: datetime | None = None,
) -> list[Candidate]:
    """Up to `limit` items: due cards (see the module's docstring), then new items in the given order."""
    due = [c for c in candidates if is_due(c, now)]
    if exam_at is not None:
        due.sort(key=lambda c: (retrievability(scheduler, c.card.card, exam_at), c.due_at))  # type: ignore[union-attr]
    else:
        due.sort(key=lambda c: c.due_at)  # type: ignore[arg-type,return-value]
    new = [c for c in candidates if c.card is None][: max(0, new_budget_left)]
    return [*due, *new][: max(0, limit)]


def predicted_retention(cards: Sequence[StoredCard], *, scheduler: Scheduler, exam_at: datetime) -> float:
    if not cards:
        return 0.0
    return sum(retrievability(scheduler, c.card, exam_at) for c in cards) / len(cards)

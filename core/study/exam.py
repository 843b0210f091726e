"""Exam mode's schedule: when a card is next due before an exam, with fsrs's own model only.

With an exam ahead, a card in the review state is next due at the earlier of
- its term-time due date: the first whole day after its last review at which fsrs predicts recall at or
  below `term_retention` (a lower retention than the student's target spends fewer reviews during the
  term; the exam is what the target is for), and
- the card's final review before the exam, a day of its final-review window: the days before the exam
  at which one more review, assumed Good, still leaves fsrs's predicted retrievability at the exam at or
  above the target (the student's desired retention), found by reviewing a copy of the card with fsrs.
  Every window ends the day before the exam (fsrs counts whole days), so taking each card's latest day
  piles every final review into a one-day cram, and its earliest day leaves the learner just at the
  target, often below it. Final reviews are spread across the student's cards instead
  (spread_final_reviews): at most `daily_max` a day, as late as that allows, never after a card's
  window. After a Good final review the card is at the target at the exam and waits for it; after a
  failed one its next window is planned again.
A card whose predicted retrievability at the exam already reaches the target needs no review before the
exam: it is due at the later of its own fsrs due date and the exam. Cards in a learning or relearning
step keep fsrs's step (minutes); once the exam has begun it is plain fsrs again (the stored due date).

fsrs counts elapsed time in whole days, so candidate review dates are whole days counted back from the
exam (00:00 UTC of its date): the latest is one day before it. The window of dates at which one Good
review suffices is found by a binary search (a later review leaves more at the exam, so the dates that
suffice are the days from the earliest one up to the exam)."""

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from fsrs import Card, Rating, Scheduler, State

# Exam mode's defaults live with its settings; imported from here too.
from core.settings.study import EXAM_DAILY_REVIEW_MAX as EXAM_DAILY_REVIEW_MAX
from core.settings.study import EXAM_TERM_RETENTION as EXAM_TERM_RETENTION
from core.study.scheduler import retrievability

DAY = timedelta(days=1)
FinalDay = Literal["earliest", "latest"]
K = TypeVar("K", bound=Hashable)


def retention_after_review(scheduler: Scheduler, card: Card, at: datetime, exam_at: datetime) -> float:
    """fsrs's predicted retrievability at the exam if the card is reviewed Good at `at`."""
    reviewed, _ = scheduler.review_card(card, Rating.Good, review_datetime=at)
    return retrievability(scheduler, reviewed, exam_at)


def final_review_window(
    scheduler: Scheduler, card: Card, exam_at: datetime, target: float
) -> tuple[datetime, datetime] | None:
    """The earliest and the latest whole day (exam - k days, after the last review) at which one Good
    review leaves retrievability >= target at the exam; None when no such day is left."""
    assert card.last_review is not None
    days_left = (exam_at - card.last_review).days  # exam - k days is after the last review for k <= this

    def suffices(k: int) -> bool:
        return retention_after_review(scheduler, card, exam_at - k * DAY, exam_at) >= target

    if days_left < 1 or not suffices(1):
        return None
    lo, hi = 1, days_left  # suffices(lo); find the largest k that suffices (the earliest date)
    if suffices(hi):
        lo = hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if suffices(mid) else (lo, mid)
    return exam_at - lo * DAY, exam_at - DAY


def term_due(scheduler: Scheduler, card: Card, term_retention: float) -> datetime:
    """The first whole day after the last review at which fsrs's retrievability is <= term_retention
    (fsrs's own interval at that desired retention, rounded up rather than to the nearest day)."""
    assert card.last_review is not None
    last = card.last_review

    def below(days: int) -> bool:
        return retrievability(scheduler, card, last + days * DAY) <= term_retention

    hi = 1
    while not below(hi) and hi < scheduler.maximum_interval:
        hi *= 2
    lo = 0  # not below at 0 days (retrievability 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return last + max(1, hi) * DAY


@dataclass(frozen=True)
class CardPlan:
    """One card's plan before the exam, from fsrs alone: `due` when it is not the exam's to plan (a
    learning step, a card already at the target at the exam, no exam), else its term-time date and its
    final-review window (None: no day suffices any more)."""

    due: datetime | None = None
    term: datetime | None = None
    window: tuple[datetime, datetime] | None = None


def card_plan(
    scheduler: Scheduler,
    card: Card,
    *,
    exam_at: datetime | None,
    now: datetime,
    term_retention: float = EXAM_TERM_RETENTION,
) -> CardPlan:
    """The card's plan (see the module's docstring); `scheduler.desired_retention` is the target."""
    if exam_at is None or now >= exam_at or card.state != State.Review or card.last_review is None:
        return CardPlan(due=card.due)
    if card.last_review >= exam_at:
        return CardPlan(due=card.due)
    target = scheduler.desired_retention
    if retrievability(scheduler, card, exam_at) >= target:
        return CardPlan(due=max(card.due, exam_at))
    window = final_review_window(scheduler, card, exam_at, target)
    return CardPlan(term=term_due(scheduler, card, term_retention), window=window)


def spread_final_reviews(
    plans: Mapping[K, CardPlan], *, exam_at: datetime, now: datetime, daily_max: int | None
) -> dict[K, datetime]:
    """Each card's due date. A final review goes on the latest day of its window that has room for it
    under `daily_max` final reviews a day (None: no cap, i.e. the day before the exam), filled from the
    exam backwards, the cards with the latest window start (the least room to move) first; a card that
    finds every day of its window full takes its window's earliest day (over the cap: never after its
    window, where one review would no longer reach the target). Days before today count as today. A
    card's due date is the earlier of its term-time date and its final review."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    last_chance = exam_at - DAY
    due: dict[K, datetime] = {}
    finals: list[tuple[datetime, datetime, K]] = []
    for key, plan in plans.items():
        if plan.due is not None:
            due[key] = plan.due
        else:
            earliest, latest = plan.window or (last_chance, last_chance)
            finals.append((max(earliest, today), max(latest, today), key))
    finals.sort(key=lambda f: f[0], reverse=True)  # stable: ties keep the callers' order
    day, used = last_chance, 0
    for earliest, latest, key in finals:
        if daily_max is None:
            final = latest
        else:
            if used >= daily_max:
                day, used = day - DAY, 0
            if latest < day:
                day, used = latest, 0
            if day < earliest:
                final = earliest  # the whole window is full
            else:
                final, used = day, used + 1
        term = plans[key].term
        due[key] = min(term, final) if term is not None else final
    return due


def exam_plan(
    scheduler: Scheduler,
    cards: Mapping[K, Card],
    *,
    exam_at: datetime,
    now: datetime,
    term_retention: float = EXAM_TERM_RETENTION,
    daily_max: int | None = EXAM_DAILY_REVIEW_MAX,
) -> dict[K, datetime]:
    """Every card's due date in exam mode (the module's docstring), final reviews spread under
    `daily_max` a day."""
    plans = {
        key: card_plan(scheduler, card, exam_at=exam_at, now=now, term_retention=term_retention)
        for key, card in cards.items()
    }
    return spread_final_reviews(plans, exam_at=exam_at, now=now, daily_max=daily_max)


def planned_due(
    scheduler: Scheduler,
    card: Card,
    *,
    exam_at: datetime | None,
    now: datetime,
    term_retention: float = EXAM_TERM_RETENTION,
    final_day: FinalDay = "latest",
) -> datetime:
    """One card's due date on its own, with no cap: its final review on the latest day of its window
    (the day before the exam) or, `final_day="earliest"`, the earliest (benchmarks/models/study_sim.py
    compares both with the capped plan, exam_plan, which is what the product serves)."""
    plan = card_plan(scheduler, card, exam_at=exam_at, now=now, term_retention=term_retention)
    if plan.due is not None or exam_at is None:
        return plan.due or card.due
    if final_day == "latest" or plan.window is None:
        return spread_final_reviews({0: plan}, exam_at=exam_at, now=now, daily_max=None)[0]
    final = max(plan.window[0], now.replace(hour=0, minute=0, second=0, microsecond=0))
    return min(plan.term, final) if plan.term is not None else final

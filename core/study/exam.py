"""Exam mode's schedule: when a card is next due before an exam, with fsrs's own model only.

With an exam ahead, a card in the review state is next due at the earlier of
- its term-time due date: the first whole day after its last review at which fsrs predicts recall at or
  below `term_retention` (a lower retention than the student's target spends fewer reviews during the
  term; the exam is what the target is for), and
- the latest date before the exam at which one more review, assumed Good, still leaves fsrs's predicted
  retrievability at the exam at or above the target (the student's desired retention): the card's last
  review before the exam, found by reviewing a copy of the card with fsrs.
A card whose predicted retrievability at the exam already reaches the target needs no review before the
exam: it is due at the later of its own fsrs due date and the exam. Cards in a learning or relearning
step keep fsrs's step (minutes); once the exam has begun it is plain fsrs again (the stored due date).

fsrs counts elapsed time in whole days, so candidate review dates are whole days counted back from the
exam (00:00 UTC of its date): the latest is one day before it. The window of dates at which one Good
review suffices is found by a binary search (a later review leaves more at the exam, so the dates that
suffice are the days from the earliest one up to the exam)."""

from datetime import datetime, timedelta

from fsrs import Card, Rating, Scheduler, State

from core.study.scheduler import retrievability

# The term-time retention of exam mode; chosen by benchmarks/study_sim.py on its development seed.
EXAM_TERM_RETENTION = 0.45
DAY = timedelta(days=1)


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


def planned_due(
    scheduler: Scheduler,
    card: Card,
    *,
    exam_at: datetime | None,
    now: datetime,
    term_retention: float = EXAM_TERM_RETENTION,
) -> datetime:
    """When the card is next due (see the module's docstring); `scheduler.desired_retention` is the
    target at the exam."""
    if exam_at is None or now >= exam_at or card.state != State.Review or card.last_review is None:
        return card.due
    if card.last_review >= exam_at:
        return card.due
    target = scheduler.desired_retention
    if retrievability(scheduler, card, exam_at) >= target:
        return max(card.due, exam_at)
    window = final_review_window(scheduler, card, exam_at, target)
    last_chance = window[1] if window else exam_at - DAY
    return min(term_due(scheduler, card, term_retention), last_chance)

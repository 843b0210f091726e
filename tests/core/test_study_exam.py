"""Exam mode's schedule (core/study/exam.py), checked against fsrs's own Scheduler: the planned review
leaves the target at the exam, a safe card waits for the exam, after the exam it is plain fsrs."""

from collections import Counter
from datetime import UTC, datetime, timedelta

from fsrs import Card, Rating, Scheduler, State

from core.study.exam import (
    EXAM_DAILY_REVIEW_MAX,
    EXAM_TERM_RETENTION,
    CardPlan,
    exam_plan,
    final_review_window,
    planned_due,
    retention_after_review,
    spread_final_reviews,
    term_due,
)
from core.study.queue import Candidate, order_queue
from core.study.scheduler import FSRS_LEARNING_STEPS, StoredCard, make_scheduler, retrievability

T0 = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
EXAM = datetime(2026, 4, 20, tzinfo=UTC)  # 48 days and 6 hours after T0
DAY = timedelta(days=1)


def two_step_scheduler() -> Scheduler:
    """fsrs's own two learning steps: the scenarios below walk a card through them."""
    return make_scheduler(learning_steps=FSRS_LEARNING_STEPS)


def graduated(scheduler: Scheduler, *ratings: Rating) -> Card:
    """A new card reviewed with these ratings, each when fsrs says it is due."""
    card, now = Card(card_id=0, due=T0), T0
    for rating in ratings:
        card, _ = scheduler.review_card(card, rating, review_datetime=now)
        now = card.due
    return card


def test_planned_review_leaves_the_target_at_the_exam() -> None:
    scheduler = two_step_scheduler()
    card = graduated(scheduler, Rating.Good, Rating.Good)  # in review, a stability of a few days
    assert card.state == State.Review and retrievability(scheduler, card, EXAM) < 0.9
    due = planned_due(scheduler, card, exam_at=EXAM, now=card.last_review, term_retention=0.9)
    # Early in the term the term-time date leads (fsrs's own due date at that retention, to a day).
    assert due == term_due(scheduler, card, 0.9) < EXAM
    assert card.due <= due <= card.due + DAY
    # With a term retention too low to bring it back before the exam: the day before the exam, the
    # latest at which one review (Good, simulated by fsrs) still leaves the target at the exam.
    late = planned_due(scheduler, card, exam_at=EXAM, now=card.last_review, term_retention=0.05)
    assert late == EXAM - DAY
    reviewed, _ = scheduler.review_card(card, Rating.Good, review_datetime=late)
    assert retrievability(scheduler, reviewed, EXAM) >= scheduler.desired_retention


def test_final_review_window_is_fsrs_own_boundary() -> None:
    scheduler = two_step_scheduler()
    card = graduated(scheduler, Rating.Good, Rating.Good, Rating.Good)
    window = final_review_window(scheduler, card, EXAM, 0.9)
    assert window is not None
    earliest, latest = window
    assert latest == EXAM - DAY and earliest <= latest
    for day in range((latest - earliest).days + 1):  # every day of the window suffices
        assert retention_after_review(scheduler, card, earliest + day * DAY, EXAM) >= 0.9
    # The day before the earliest does not (the binary search found the boundary).
    assert retention_after_review(scheduler, card, earliest - DAY, EXAM) < 0.9


def test_a_safe_card_gets_no_review_before_the_exam() -> None:
    scheduler = two_step_scheduler()
    card = Card(
        card_id=0,
        state=State.Review,
        step=None,
        stability=400.0,
        difficulty=4.0,
        due=T0 + 20 * DAY,
        last_review=T0,
    )
    assert retrievability(scheduler, card, EXAM) >= 0.9
    due = planned_due(scheduler, card, exam_at=EXAM, now=T0, term_retention=0.99)
    assert due == EXAM  # not before, though its term-time date and even its fsrs date are earlier
    later = Card(
        card_id=0, state=State.Review, step=None, stability=400.0, difficulty=4.0, due=EXAM + 9 * DAY
    )
    later.last_review = T0
    assert planned_due(scheduler, later, exam_at=EXAM, now=T0) == EXAM + 9 * DAY  # fsrs's own, after it


def test_plain_fsrs_after_the_exam_and_in_learning_steps() -> None:
    scheduler = two_step_scheduler()
    card = graduated(scheduler, Rating.Good, Rating.Good)
    assert planned_due(scheduler, card, exam_at=None, now=T0) == card.due
    assert planned_due(scheduler, card, exam_at=EXAM, now=EXAM) == card.due  # the exam has begun
    after, _ = scheduler.review_card(card, Rating.Good, review_datetime=EXAM + DAY)
    assert planned_due(scheduler, after, exam_at=EXAM, now=T0) == after.due
    step, _ = scheduler.review_card(Card(card_id=0, due=T0), Rating.Again, review_datetime=T0)
    assert step.state == State.Learning
    assert planned_due(scheduler, step, exam_at=EXAM, now=T0) == step.due == T0 + timedelta(minutes=1)


def test_the_queue_serves_planned_dates() -> None:
    scheduler = two_step_scheduler()
    weak = graduated(scheduler, Rating.Good, Rating.Good)
    safe = Card(card_id=1, state=State.Review, step=None, stability=400.0, difficulty=4.0, due=T0 + DAY)
    safe.last_review = T0
    cards = {"weak": weak, "safe": safe}
    now = EXAM - DAY + timedelta(hours=18)  # the last evening before the exam
    candidates = [
        Candidate(
            key,
            StoredCard(card, reps=2, lapses=0, created_at=T0),
            planned_due(scheduler, card, exam_at=EXAM, now=now),
        )
        for key, card in cards.items()
    ]
    queue = order_queue(candidates, scheduler=scheduler, now=now, new_budget_left=0, limit=5, exam_at=EXAM)
    assert [c.item_id for c in queue] == ["weak"]  # the safe card is past its fsrs date, yet not served
    assert 0.3 <= EXAM_TERM_RETENTION < 0.9


def weak_cards(scheduler: Scheduler, count: int) -> dict[int, Card]:
    """`count` cards in review, each with a final-review window of several days before the exam."""
    cards = {}
    for key in range(count):
        card = graduated(scheduler, Rating.Good, Rating.Good, Rating.Good)
        card.card_id = key
        cards[key] = card
    return cards


def test_the_daily_cap_spreads_final_reviews_within_their_windows() -> None:
    scheduler = two_step_scheduler()
    cards = weak_cards(scheduler, 10)
    now = max(card.last_review for card in cards.values())  # type: ignore[type-var]
    window = final_review_window(scheduler, cards[0], EXAM, 0.9)
    assert window is not None and (window[1] - window[0]).days >= 4  # room for 10 at 3 a day
    uncapped = exam_plan(scheduler, cards, exam_at=EXAM, now=now, term_retention=0.05, daily_max=None)
    assert set(uncapped.values()) == {EXAM - DAY}  # no cap: all ten on the day before the exam
    capped = exam_plan(scheduler, cards, exam_at=EXAM, now=now, term_retention=0.05, daily_max=3)
    per_day = Counter(capped.values())
    assert max(per_day.values()) == 3 and sum(per_day.values()) == 10
    # Filled from the exam backwards: the last three days full, the remaining card the day before.
    assert sorted(per_day.items()) == [(EXAM - 4 * DAY, 1), *((EXAM - k * DAY, 3) for k in (3, 2, 1))]
    for key, due in capped.items():  # never outside the card's window: one Good review still suffices
        earliest, latest = final_review_window(scheduler, cards[key], EXAM, 0.9)  # type: ignore[misc]
        assert earliest <= due <= latest
        assert retention_after_review(scheduler, cards[key], due, EXAM) >= 0.9


def test_a_full_window_overflows_to_its_earliest_day_never_later() -> None:
    """Cards whose window is only the last days: past the cap they take their window's earliest day
    (over the cap) rather than a day after the window, where one review would not reach the target."""
    scheduler = two_step_scheduler()
    short = CardPlan(window=(EXAM - 2 * DAY, EXAM - DAY))
    plans = {key: short for key in range(5)}
    now = EXAM - 10 * DAY
    due = spread_final_reviews(plans, exam_at=EXAM, now=now, daily_max=2)
    assert Counter(due.values()) == {EXAM - DAY: 2, EXAM - 2 * DAY: 3}  # 2 + 2 in the window, 1 over
    # The term-time date still comes first when it is earlier, and safe/learning cards keep their date.
    early = CardPlan(term=EXAM - 20 * DAY, window=(EXAM - 5 * DAY, EXAM - DAY))
    fixed = CardPlan(due=EXAM + DAY)
    both = spread_final_reviews({"a": early, "b": fixed}, exam_at=EXAM, now=now - 20 * DAY, daily_max=1)
    assert both == {"a": EXAM - 20 * DAY, "b": EXAM + DAY}
    # A window that began before today counts from today (due now, not in the past).
    late_now = EXAM - 3 * DAY + timedelta(hours=18)
    stale = CardPlan(window=(EXAM - 9 * DAY, EXAM - DAY))
    spread = spread_final_reviews(
        {0: stale, 1: stale, 2: stale, 3: stale}, exam_at=EXAM, now=late_now, daily_max=1
    )
    assert sorted(spread.values()) == [EXAM - 3 * DAY, EXAM - 3 * DAY, EXAM - 2 * DAY, EXAM - DAY]
    assert exam_plan(scheduler, {}, exam_at=EXAM, now=now) == {}


def test_one_card_plan_is_the_uncapped_plan() -> None:
    scheduler = two_step_scheduler()
    card = graduated(scheduler, Rating.Good, Rating.Good, Rating.Good)
    now = card.last_review
    assert now is not None
    alone = exam_plan(scheduler, {0: card}, exam_at=EXAM, now=now, term_retention=0.05, daily_max=1)
    assert alone[0] == planned_due(scheduler, card, exam_at=EXAM, now=now, term_retention=0.05) == EXAM - DAY
    earliest = planned_due(scheduler, card, exam_at=EXAM, now=now, term_retention=0.05, final_day="earliest")
    assert earliest == final_review_window(scheduler, card, EXAM, 0.9)[0]  # type: ignore[index]
    assert 1 <= (EXAM_DAILY_REVIEW_MAX or 0) <= 200

"""The study loop's pure logic: the FSRS wrapper against fsrs's own Scheduler, the attempt rating
rule, the queue's order and exam mode, the optimisation threshold."""

from datetime import UTC, date, datetime, timedelta

from fsrs import Card, Rating, Scheduler, State

from core.study.optimize import MIN_REVIEWS, due_for_optimization
from core.study.queue import Candidate, exam_start, order_queue, predicted_retention
from core.study.rating import rating_for_attempt
from core.study.scheduler import LEARNING_STEPS, card_out, make_scheduler, retrievability, review

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_review_follows_fsrs_scheduler() -> None:
    ours, theirs = make_scheduler(), Scheduler(learning_steps=LEARNING_STEPS, enable_fuzzing=False)
    stored, card, now = None, Card(card_id=0, due=T0), T0
    ratings = [Rating.Good, Rating.Good, Rating.Good, Rating.Again, Rating.Good, Rating.Hard, Rating.Easy]
    for rating in ratings:
        stored, _ = review(ours, stored, rating, now)
        card, _ = theirs.review_card(card, rating, review_datetime=now)
        assert (stored.card.state, stored.card.due, stored.card.stability) == (
            card.state,
            card.due,
            card.stability,
        )
        assert stored.card.difficulty == card.difficulty
        now = card.due  # the student comes back when it is due
    assert stored is not None and stored.reps == len(ratings)
    assert stored.lapses == 1  # the Again came on a card in the review state
    assert card_out(ours, stored, now)["state"] == "review"
    assert card_out(ours, None, now)["state"] == "new"


def test_one_learning_step_a_failed_new_card_comes_back_in_ten_minutes() -> None:
    known, _ = review(make_scheduler(), None, Rating.Good, T0)  # fsrs's schedule at once
    assert known.card.state == State.Review and known.card.due >= T0 + timedelta(days=1)
    failed, _ = review(make_scheduler(), None, Rating.Again, T0)
    assert failed.card.state == State.Learning and failed.card.due == T0 + timedelta(minutes=10)
    again, _ = review(make_scheduler(), failed, Rating.Good, failed.card.due)
    assert again.card.state == State.Review


def test_parameters_and_retention_change_the_schedule() -> None:
    default, _ = review(make_scheduler(), None, Rating.Easy, T0)
    strict, _ = review(make_scheduler(desired_retention=0.97), None, Rating.Easy, T0)
    assert strict.card.due < default.card.due
    params = list(make_scheduler().parameters)
    params[3] = 30.0  # initial stability after Easy
    fitted, _ = review(make_scheduler(params), None, Rating.Easy, T0)
    assert fitted.card.due > default.card.due


def test_rating_rule() -> None:
    assert rating_for_attempt("incorrect", 0.0, first_try=True) == Rating.Again
    assert rating_for_attempt("partially_correct", 0.6, first_try=True) == Rating.Hard
    assert rating_for_attempt("correct", 0.9, first_try=True) == Rating.Good
    assert rating_for_attempt("correct", 1.0, first_try=False) == Rating.Good
    assert rating_for_attempt("correct", 0.95, first_try=True) == Rating.Easy


def _studied(rating: Rating, at: datetime) -> Candidate:
    stored, _ = review(make_scheduler(), None, rating, at)
    stored, _ = review(make_scheduler(), stored, Rating.Good, stored.card.due)
    return Candidate(object(), stored)


def test_queue_due_first_most_overdue_then_new_within_budget() -> None:
    scheduler = make_scheduler()
    early, late = _studied(Rating.Good, T0), _studied(Rating.Good, T0 + timedelta(days=1))
    easy = _studied(Rating.Easy, T0)  # due long after the others
    new = [Candidate(i, None) for i in range(5)]
    now = late.card.card.due + timedelta(hours=1)  # type: ignore[union-attr]
    assert easy.card is not None and easy.card.card.due > now
    queue = order_queue([*new, late, easy, early], scheduler=scheduler, now=now, new_budget_left=2, limit=10)
    assert queue == [early, late, new[0], new[1]]
    assert order_queue([*new, late, early], scheduler=scheduler, now=now, new_budget_left=9, limit=3) == [
        early,
        late,
        new[0],
    ]


def test_exam_mode_orders_by_retrievability_at_the_exam() -> None:
    scheduler = make_scheduler()
    weak = Candidate("weak", review(scheduler, None, Rating.Again, T0)[0])  # learning, tiny stability
    strong = _studied(Rating.Easy, T0 - timedelta(days=60))
    now = T0 + timedelta(days=1)
    assert strong.card is not None and weak.card is not None
    assert strong.card.card.due < weak.card.card.due <= now  # strong is the more overdue
    assert order_queue([weak, strong], scheduler=scheduler, now=now, new_budget_left=0, limit=5) == [
        strong,
        weak,
    ]
    exam = exam_start(date(2026, 3, 20), now)
    assert exam == datetime(2026, 3, 20, tzinfo=UTC)
    ordered = order_queue(
        [weak, strong], scheduler=scheduler, now=now, new_budget_left=0, limit=5, exam_at=exam
    )
    assert ordered == [weak, strong]
    expected = (
        retrievability(scheduler, weak.card.card, exam) + retrievability(scheduler, strong.card.card, exam)
    ) / 2
    assert predicted_retention([weak.card, strong.card], scheduler=scheduler, exam_at=exam) == expected
    assert predicted_retention([], scheduler=scheduler, exam_at=exam) == 0.0
    assert exam_start(date(2026, 3, 1), now) is None  # passed
    assert exam_start(None, now) is None


def test_optimisation_threshold() -> None:
    assert not due_for_optimization(MIN_REVIEWS - 1, None)
    assert due_for_optimization(MIN_REVIEWS, None)
    assert not due_for_optimization(MIN_REVIEWS + 10, MIN_REVIEWS)
    assert due_for_optimization(2 * MIN_REVIEWS, MIN_REVIEWS)
    assert State.Learning  # fsrs 6 has no New state: a missing card is new

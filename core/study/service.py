"""The study loop's operations: the store's rows through the pure logic. A route (or the attempts
route) calls these with a connection and the request's clock `now` (UTC)."""

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from fsrs import Rating, Scheduler
from psycopg import AsyncConnection

from core.store.study import study
from core.store.study.study import StudySettings
from core.study.exam import EXAM_DAILY_REVIEW_MAX, EXAM_TERM_RETENTION, exam_plan
from core.study.optimize import due_for_optimization
from core.study.queue import Candidate, exam_start, is_due, order_queue, predicted_retention
from core.study.scheduler import card_out, make_scheduler, review, stored_card, study_card
from core.study.topics import student_topics


def scheduler_for(settings: StudySettings) -> Scheduler:
    return make_scheduler(settings.parameters, settings.desired_retention)


def exam_of(settings: StudySettings, now: datetime) -> tuple[date | None, str, datetime | None]:
    """The exam date in force (the student's own before the project's), its source, and its moment
    (None: no exam date, or it has passed)."""
    exam_date, source = (
        (settings.exam_date, "student") if settings.exam_date else (settings.project_exam_date, "project")
    )
    return exam_date, source, exam_start(exam_date, now)


@dataclass(frozen=True)
class Reviewed:
    card: dict[str, Any]  # CardOut fields
    next_due: datetime
    review_id: UUID
    optimize: bool  # the student's review count calls for fitting their parameters again


async def review_item(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    rating: Rating,
    source: str,
    now: datetime,
    term_retention: float = EXAM_TERM_RETENTION,
    daily_max: int | None = EXAM_DAILY_REVIEW_MAX,
) -> Reviewed | None:
    """None when the caller may not study this item (not a member, not studiable, gone)."""
    async with conn.transaction():
        settings = await study.get_settings(conn, project_id=project_id, user_id=user_id)
        if settings is None:
            return None
        item = await study.lock_item(conn, project_id=project_id, user_id=user_id, question_id=question_id)
        if item is None:
            return None
        scheduler = scheduler_for(settings)
        before = stored_card(item.card)
        after, _ = review(scheduler, before, rating, now)
        saved = await study.save_review(
            conn,
            project_id=project_id,
            user_id=user_id,
            question_id=question_id,
            card=study_card(after),
            rating=int(rating),
            source=source,
            state_before=int(before.card.state) if before else None,
            reviewed_at=now,
        )
        if saved is None:
            return None
    # In exam mode the next due date is exam mode's plan (core/study/exam.py) over all the student's
    # cards (the daily cap spreads final reviews across them); the stored one is fsrs's.
    due = after.card.due
    exam_at = exam_of(settings, now)[2]
    if exam_at is not None:
        rows = await study.study_items(conn, project_id=project_id, user_id=user_id)
        cards = {row.id: stored.card for row in rows if (stored := stored_card(row.card)) is not None}
        cards[question_id] = after.card
        plan = exam_plan(
            scheduler, cards, exam_at=exam_at, now=now, term_retention=term_retention, daily_max=daily_max
        )
        due = plan[question_id]
    return Reviewed(
        card={**card_out(scheduler, after, now), "due": due},
        next_due=due,
        review_id=saved.review_id,
        optimize=due_for_optimization(saved.reviews, settings.optimized_reviews),
    )


def day_start(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


async def build_queue(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    now: datetime,
    limit: int,
    term_retention: float = EXAM_TERM_RETENTION,
    daily_max: int | None = EXAM_DAILY_REVIEW_MAX,
) -> dict[str, Any] | None:
    """The queue (core/study/queue.py): rows of the items to study with their CardOut, counts, exam.
    In exam mode a card's due date (served, counted and shown) is exam mode's plan (core/study/exam.py)."""
    settings = await study.get_settings(conn, project_id=project_id, user_id=user_id)
    if settings is None:
        return None
    rows = await study.study_items(conn, project_id=project_id, user_id=user_id)
    introduced = await study.new_cards_since(
        conn, project_id=project_id, user_id=user_id, since=day_start(now)
    )
    scheduler = scheduler_for(settings)
    exam_date, source, exam_at = exam_of(settings, now)

    stored_cards = {row.id: stored_card(row.card) for row in rows}
    plan: dict[Any, Any] = {}
    if exam_at is not None:
        cards = {key: stored.card for key, stored in stored_cards.items() if stored is not None}
        plan = exam_plan(
            scheduler, cards, exam_at=exam_at, now=now, term_retention=term_retention, daily_max=daily_max
        )
    candidates = [Candidate(row.id, stored_cards[row.id], plan.get(row.id)) for row in rows]
    by_id = {row.id: row for row in rows}
    budget = max(0, settings.new_per_day - introduced)
    ordered = order_queue(
        candidates, scheduler=scheduler, now=now, new_budget_left=budget, limit=limit, exam_at=exam_at
    )
    studied = [c.card for c in candidates if c.card is not None]
    exam = None
    if exam_at is not None:
        retention = predicted_retention(studied, scheduler=scheduler, exam_at=exam_at)
        exam = {"date": exam_date, "source": source, "predicted_retention": retention}
    return {
        "items": [
            {
                "row": by_id[c.item_id],
                "card": {**card_out(scheduler, c.card, now), "due": c.due_at},
                "is_new": c.card is None,
            }
            for c in ordered
        ],
        "due_count": sum(1 for c in candidates if is_due(c, now)),
        "new_count": sum(1 for c in candidates if c.card is None),
        "new_budget_left": budget,
        "exam": exam,
    }


async def student_mastery(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, now: datetime
) -> list[dict[str, Any]] | None:
    settings = await study.get_settings(conn, project_id=project_id, user_id=user_id)
    if settings is None:
        return None
    rows = await study.study_items(conn, project_id=project_id, user_id=user_id)
    return student_topics(rows, scheduler_for(settings), now)


__all__ = ["Reviewed", "build_queue", "day_start", "review_item", "student_mastery"]

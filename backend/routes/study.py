"""The study loop (issue 12): the FSRS queue, reviews, a student's study settings, and mastery (own,
and the class's for owners). Every member studies; each reads and writes only their own cards,
reviews and settings (the SQL says so: core/store/study.py). Times come from the request's clock."""

import logging
from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

from arq.connections import ArqRedis
from fastapi import APIRouter, HTTPException, Query, status
from fsrs import Rating

from backend.clock import ClockDep
from backend.deps import DbDep, ProjectAccess, ProjectDep, ProjectOwnerDep, QueueDep, SettingsDep
from backend.question_schemas import QuestionOut
from backend.study_schemas import (
    ClassMasteryOut,
    MasteryOut,
    QueueOut,
    ReviewCreate,
    ReviewOut,
    StudySettingsOut,
    StudySettingsUpdate,
)
from core.store import study
from core.study import service
from core.study.rating import Verdict, rating_for_attempt
from core.study.scheduler import make_scheduler
from core.study.topics import class_topics
from workers.jobs.specs import OPTIMIZE_STUDY, OptimizeStudy, enqueue

log = logging.getLogger(__name__)
router = APIRouter(prefix="/projects/{project_id}", tags=["study"])


def _not_studiable() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "Question not found, or not in your study queue.")


async def request_optimization(queue: ArqRedis, project_id: Any, user_id: Any) -> None:
    """Fits the student's FSRS parameters on the index worker (torch, seconds of CPU: never in a
    request). One job per student and project at a time (its id); a lost one is asked for again by the
    next review, since the count that calls for it stays above the threshold until a fit is stored."""
    try:
        await enqueue(queue, OPTIMIZE_STUDY, OptimizeStudy(project_id, user_id))
    except Exception as error:  # the review is stored; fitting waits for the next one
        log.warning("could not enqueue the FSRS fit for %s: %r", user_id, error)


async def review_attempt(
    db: DbDep,
    queue: ArqRedis,
    access: ProjectAccess,
    question_id: UUID,
    *,
    verdict: Verdict,
    score: float,
    first_try: bool,
    now: datetime,
) -> None:
    """A graded attempt is also a review of the item, rated by core/study/rating.py's rule; nothing
    when the item is not in the caller's study queue (pending, flagged, archived)."""
    rating = rating_for_attempt(verdict, score, first_try=first_try)
    async with db.connection() as conn:
        reviewed = await service.review_item(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            question_id=question_id,
            rating=rating,
            source="attempt",
            now=now.astimezone(UTC),
        )
    if reviewed is not None and reviewed.optimize:
        await request_optimization(queue, access.id, access.user.id)


@router.get("/study/queue")
async def study_queue(
    access: ProjectDep,
    db: DbDep,
    clock: ClockDep,
    settings: SettingsDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> QueueOut:
    now = clock().astimezone(UTC)
    async with db.connection() as conn:
        queue = await service.build_queue(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            now=now,
            limit=limit,
            term_retention=settings.exam_term_retention,
            daily_max=settings.exam_daily_review_max or None,
        )
    if queue is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Project not found.")
    items = [
        {
            "question": QuestionOut.from_row(item["row"], with_answers=False),
            "card": item["card"],
            "is_new": item["is_new"],
        }
        for item in queue["items"]
    ]
    return QueueOut.model_validate({**queue, "items": items})


@router.post("/study/reviews", status_code=status.HTTP_201_CREATED)
async def post_review(
    body: ReviewCreate,
    access: ProjectDep,
    db: DbDep,
    clock: ClockDep,
    queue: QueueDep,
    settings: SettingsDep,
) -> ReviewOut:
    """404 when the item is not one the caller may study (not approved, flagged, archived, elsewhere)."""
    now = clock().astimezone(UTC)
    async with db.connection() as conn:
        reviewed = await service.review_item(
            conn,
            project_id=access.id,
            user_id=access.user.id,
            question_id=body.question_id,
            rating=Rating(body.rating),
            source="review",
            now=now,
            term_retention=settings.exam_term_retention,
            daily_max=settings.exam_daily_review_max or None,
        )
    if reviewed is None:
        raise _not_studiable()
    if reviewed.optimize:
        await request_optimization(queue, access.id, access.user.id)
    return ReviewOut(card=reviewed.card, next_due=reviewed.next_due, review_id=reviewed.review_id)  # type: ignore[arg-type]


async def _settings(db: DbDep, access: ProjectDep) -> StudySettingsOut:
    async with db.connection() as conn:
        row = await study.get_settings(conn, project_id=access.id, user_id=access.user.id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Project not found.")
    return StudySettingsOut(**row)


@router.get("/study/settings")
async def get_study_settings(access: ProjectDep, db: DbDep) -> StudySettingsOut:
    return await _settings(db, access)


@router.put("/study/settings")
async def put_study_settings(body: StudySettingsUpdate, access: ProjectDep, db: DbDep) -> StudySettingsOut:
    changes = body.model_dump(exclude_none=True)
    if "exam_date" in body.model_fields_set:  # null is a value here: back to the project's date
        changes["exam_date"] = body.exam_date
    async with db.connection() as conn:
        await study.put_settings(conn, project_id=access.id, user_id=access.user.id, changes=changes)
    return await _settings(db, access)


@router.get("/mastery")
async def mastery(access: ProjectDep, db: DbDep, clock: ClockDep) -> MasteryOut:
    """The caller's own mastery per topic, weakest first (model: core/study/mastery.py)."""
    now = clock().astimezone(UTC)
    async with db.connection() as conn:
        topics = await service.student_mastery(conn, project_id=access.id, user_id=access.user.id, now=now)
    if topics is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Project not found.")
    return MasteryOut.model_validate({"topics": topics})


@router.get("/mastery/class")
async def class_mastery(access: ProjectOwnerDep, db: DbDep, clock: ClockDep) -> ClassMasteryOut:
    """Owners: the class's aggregates per topic; never a student's identity or answer text."""
    now = clock().astimezone(UTC)
    scope = {"project_id": access.id, "user_id": access.user.id}
    async with db.connection() as conn:
        items = await study.class_items(conn, **scope)
        activity = await study.class_cards(conn, **scope)
    return ClassMasteryOut.model_validate(class_topics(items, activity, make_scheduler(), now))

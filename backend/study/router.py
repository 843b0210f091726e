"""The study loop: the FSRS queue, reviews, a student's study settings, and mastery (own,
and the class's for owners). Every member studies; each reads and writes only their own cards,
reviews and settings (the SQL says so: core/store/study/study.py). Times come from the request's clock."""

from datetime import UTC
from typing import Annotated, TypedDict

from fastapi import APIRouter, HTTPException, Query, status
from fsrs import Rating

from backend.deps import DbDep, ProjectDep, ProjectOwnerDep, QueueDep, SettingsDep
from backend.questions.schemas import QuestionOut
from backend.study.schemas import (
    ClassMasteryOut,
    MasteryOut,
    QueueOut,
    ReviewCreate,
    ReviewOut,
    StudySettingsOut,
    StudySettingsUpdate,
)
from backend.web.clock import ClockDep
from core.messages import Text
from core.settings import Settings
from core.store.study import study
from core.study import service
from core.study.reviews import request_optimization
from core.study.scheduler import make_scheduler
from core.study.topics import class_topics

router = APIRouter(prefix="/projects/{project_id}", tags=["study"])


def _not_studiable() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, Text("study.not_in_queue"))


class ExamPace(TypedDict):
    term_retention: float
    daily_max: int | None


def _exam_pace(settings: Settings) -> ExamPace:
    """The server's pacing towards an exam date, which the queue and each review schedule by alike."""
    return ExamPace(
        term_retention=settings.study.exam_term_retention,
        daily_max=settings.study.exam_daily_review_max or None,
    )


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
        queue = await service.build_queue(conn, **access.scope, now=now, limit=limit, **_exam_pace(settings))
    if queue is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("project.not_found"))
    items = [
        {
            "question": QuestionOut.from_question(item["row"], with_answers=False),
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
    async with db.connection() as conn:
        reviewed = await service.review_item(
            conn,
            **access.scope,
            question_id=body.question_id,
            rating=Rating(body.rating),
            source="review",
            now=clock().astimezone(UTC),
            **_exam_pace(settings),
        )
    if reviewed is None:
        raise _not_studiable()
    if reviewed.optimize:
        await request_optimization(db, queue, access.id, access.user.id)
    return ReviewOut(card=reviewed.card, next_due=reviewed.next_due, review_id=reviewed.review_id)  # type: ignore[arg-type]


async def _settings(db: DbDep, access: ProjectDep) -> StudySettingsOut:
    async with db.connection() as conn:
        row = await study.get_settings(conn, **access.scope)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("project.not_found"))
    return StudySettingsOut.model_validate(row)


@router.get("/study/settings")
async def get_study_settings(access: ProjectDep, db: DbDep) -> StudySettingsOut:
    return await _settings(db, access)


@router.put("/study/settings")
async def put_study_settings(body: StudySettingsUpdate, access: ProjectDep, db: DbDep) -> StudySettingsOut:
    changes = body.model_dump(exclude_none=True)
    if "exam_date" in body.model_fields_set:  # null is a value here: back to the project's date
        changes["exam_date"] = body.exam_date
    async with db.connection() as conn:
        await study.put_settings(conn, **access.scope, changes=changes)
    return await _settings(db, access)


@router.get("/mastery")
async def mastery(access: ProjectDep, db: DbDep, clock: ClockDep) -> MasteryOut:
    """The caller's own mastery per topic, weakest first (model: core/study/mastery.py)."""
    async with db.connection() as conn:
        topics = await service.student_mastery(conn, **access.scope, now=clock().astimezone(UTC))
    if topics is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("project.not_found"))
    return MasteryOut.model_validate({"topics": topics})


@router.get("/mastery/class")
async def class_mastery(access: ProjectOwnerDep, db: DbDep, clock: ClockDep) -> ClassMasteryOut:
    """Owners: the class's aggregates per topic; never a student's identity or answer text."""
    now = clock().astimezone(UTC)
    async with db.connection() as conn:
        items = await study.class_items(conn, **access.scope)
        activity = await study.class_cards(conn, **access.scope)
    return ClassMasteryOut.model_validate(class_topics(items, activity, make_scheduler(), now))

"""Reviews that reach the study queue from outside the review route: a graded attempt is also a review
of its item, and enough reviews call for fitting the student's FSRS parameters again."""

import logging
from datetime import UTC, datetime
from uuid import UUID

from arq.connections import ArqRedis
from psycopg_pool import AsyncConnectionPool

from core.jobs.specs import OPTIMIZE_STUDY, OptimizeStudy, enqueue
from core.store.runs import agent_jobs
from core.study import service
from core.study.rating import Verdict, rating_for_attempt

log = logging.getLogger(__name__)


async def request_optimization(
    pool: AsyncConnectionPool, queue: ArqRedis, project_id: UUID, user_id: UUID
) -> None:
    """Fits the student's FSRS parameters on the index worker (torch, seconds of CPU: never in a
    request). One job per student and project at a time (its id), recorded in its jobs row first, so a
    fit that Redis loses is queued again when the index worker starts."""
    args = OptimizeStudy(project_id, user_id)
    async with pool.connection() as conn:
        member = await agent_jobs.request_optimize_job(
            conn, project_id=project_id, user_id=user_id, job_id=OPTIMIZE_STUDY.job_id(args)
        )
    if not member:  # left the project since the review: nothing of theirs is fitted
        return
    try:
        await enqueue(queue, OPTIMIZE_STUDY, args)
    except Exception as error:  # the review and the queued row are stored: the worker's start enqueues it
        log.warning("could not enqueue the FSRS fit for %s: %r", user_id, error)


async def review_attempt(
    pool: AsyncConnectionPool,
    queue: ArqRedis,
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    verdict: Verdict,
    score: float,
    first_try: bool,
    now: datetime,
) -> None:
    """A graded attempt is also a review of the item, rated by core/study/rating.py's rule; nothing
    when the item is not in the caller's study queue (pending, flagged, archived)."""
    rating = rating_for_attempt(verdict, score, first_try=first_try)
    async with pool.connection() as conn:
        reviewed = await service.review_item(
            conn,
            project_id=project_id,
            user_id=user_id,
            question_id=question_id,
            rating=rating,
            source="attempt",
            now=now.astimezone(UTC),
        )
    if reviewed is not None and reviewed.optimize:
        await request_optimization(pool, queue, project_id, user_id)

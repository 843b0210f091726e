"""The job of the study loop: fit one student's FSRS parameters to their own review log (fsrs's
Optimizer, torch on the CPU). On the index queue: CPU work of seconds like indexing, not model-bound,
and every deployment runs that queue. Idempotent: a rerun refits and stores the same kind of row. Its
jobs row (migration 0019, one per student and project: core/store/runs/agent_jobs.py) is queued when a review
asks for a fit, so a killed worker's or a lost queue's fit runs again."""

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection

from core.jobs.specs import OPTIMIZE_STUDY, OptimizeStudy
from core.runtime import Runtime
from core.settings import Settings
from core.store.runs import agent_jobs
from core.store.study import study
from core.study.optimize import MIN_REVIEWS, LoggedReview, due_for_optimization, optimize
from workers.jobs.framework import Failure, Result, TrackedJob

log = logging.getLogger(__name__)


async def _optimize(runtime: Runtime, args: OptimizeStudy) -> Result:
    scope = {"project_id": args.project_id, "user_id": args.user_id}
    async with runtime.pool.connection() as conn:
        settings = await study.get_settings(conn, **scope)
        rows = await study.review_logs(conn, **scope) if settings is not None else []
    if settings is None or not due_for_optimization(len(rows), settings.optimized_reviews):
        return {"status": "skipped", "reviews": len(rows), "min_reviews": MIN_REVIEWS}
    items: dict[Any, int] = {}
    logs = [
        LoggedReview(
            items.setdefault(r.question_id, len(items)),
            r.rating,
            r.reviewed_at.astimezone(UTC),
            r.duration_ms,
        )
        for r in rows
    ]
    parameters = await asyncio.to_thread(optimize, logs)
    async with runtime.pool.connection() as conn:
        await study.save_parameters(
            conn, **scope, parameters=parameters, reviews=len(rows), at=datetime.now(UTC)
        )
    fitted = parameters is not None
    log.info("FSRS fit for a student of %s on %d reviews: %s", args.project_id, len(rows), fitted)
    return {"status": "fitted" if parameters else "defaults", "reviews": len(rows)}


class OptimizeStudyJob(TrackedJob[OptimizeStudy]):
    spec = OPTIMIZE_STUDY
    # The same job id is asked for again by the next reviews past the threshold: arq must not refuse it
    # for an hour after a fit. The row keeps the outcome.
    keep_result_s = 0.0
    timeout_reason = "The FSRS fit took longer than {limit_s:g} s and was stopped."
    died_reason = "The worker died while fitting this student's parameters, every time it was tried."

    def time_limit_s(self, settings: Settings) -> float:
        return settings.workers.index_job_timeout_s  # CPU work on the index queue, like indexing

    async def start(self, conn: AsyncConnection[Any], args: OptimizeStudy) -> int | Result:
        job_id = self.spec.job_id(args)
        # A fit queued before migration 0019 has no row: it gets one now (while the student is a member).
        scope = {"project_id": args.project_id, "user_id": args.user_id}
        if not await agent_jobs.request_optimize_job(conn, **scope, job_id=job_id):
            return {"status": "skipped", "reason": "the student is no longer a member of the project"}
        deaths = await agent_jobs.start_agent_job(
            conn, project_id=args.project_id, job_id=job_id, rerun_succeeded=True
        )
        if deaths is None:  # deleted meanwhile (the student left, or was deleted)
            return {"status": "skipped", "reason": "its row is gone"}
        return deaths

    def unforeseen_failure(self, error: Exception) -> Failure:
        return Failure(f"The FSRS parameters could not be fitted ({type(error).__name__}).")

    async def run(self, runtime: Runtime, args: OptimizeStudy) -> Result:
        result = await _optimize(runtime, args)
        async with runtime.pool.connection() as conn:  # a rerun refits: no need to share a transaction
            await agent_jobs.finish_agent_job(
                conn, project_id=args.project_id, job_id=self.spec.job_id(args), result=result
            )
        return result


optimize_study_parameters = OptimizeStudyJob()

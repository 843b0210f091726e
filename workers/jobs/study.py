"""The job of the study loop: fit one student's FSRS parameters to their own review log (fsrs's
Optimizer, torch on the CPU). On the index queue: CPU work of seconds like indexing, not model-bound,
and every deployment runs that queue. Idempotent: a rerun refits and stores the same kind of row."""

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from core.jobs.specs import OPTIMIZE_STUDY, OptimizeStudy
from core.runtime import Runtime
from core.store import study
from core.study.optimize import MIN_REVIEWS, LoggedReview, due_for_optimization, optimize
from workers.jobs.framework import FunctionJob, Result

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


optimize_study_parameters = FunctionJob(OPTIMIZE_STUDY, _optimize, max_tries=2)

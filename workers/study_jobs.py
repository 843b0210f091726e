"""arq job of the study loop: fit one student's FSRS parameters to their own review log (fsrs's
Optimizer, torch on the CPU). On the index queue: CPU work of seconds like indexing, not model-bound,
and every deployment runs that queue. Idempotent: a rerun refits and stores the same kind of row."""

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from core.store import study
from core.study.optimize import MIN_REVIEWS, LoggedReview, due_for_optimization, optimize

log = logging.getLogger(__name__)


async def optimize_study_parameters(ctx: dict[str, Any], project_id: str, user_id: str) -> dict[str, Any]:
    scope = {"project_id": project_id, "user_id": user_id}
    async with ctx["pool"].connection() as conn:
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
    async with ctx["pool"].connection() as conn:
        await study.save_parameters(
            conn, **scope, parameters=parameters, reviews=len(rows), at=datetime.now(UTC)
        )
    log.info("FSRS fit for a student of %s on %d reviews: %s", project_id, len(rows), parameters is not None)
    return {"status": "fitted" if parameters else "defaults", "reviews": len(rows)}

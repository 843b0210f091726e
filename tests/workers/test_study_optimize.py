"""The FSRS fit job (workers/jobs/study.py) on the real database: a student's review log past the
threshold is fitted with fsrs's Optimizer and stored as theirs, its jobs row ending `succeeded`; under
it, nothing is fitted."""

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from core.jobs.specs import OPTIMIZE_STUDY, OptimizeStudy
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, projects
from core.store.study import questions, study
from core.study.optimize import MIN_REVIEWS
from tests.bank import draft, unit_vector
from tests.workers.runtime import job_runtime
from workers.jobs.study import optimize_study_parameters

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def test_fit_after_enough_reviews(settings: Settings, services: ServiceUrls, db: Conn) -> None:
    user = await accounts.ensure_account(db, email=f"fit-{uuid.uuid4()}@example.org")
    project = await projects.create_project(db, user_id=user.id, name="fit", description="", language="en")
    scope = {"project_id": project.id, "user_id": user.id}
    async with job_runtime(settings, services) as runtime:  # as the workers open it
        pool = runtime.pool
        async with pool.connection() as conn:
            ids = []
            for i in range(60):
                item = draft(f"Question {i}?", "An answer", unit_vector(seed=i), explanation="")
                row = await questions.insert_question(conn, **scope, duplicate_similarity=1.01, question=item)
                assert row is not None
                ids.append(row.id)
            await conn.execute(
                "UPDATE questions SET review_state = 'approved' WHERE project_id = %s", (project.id,)
            )
        args = OptimizeStudy(project.id, user.id)
        assert (await optimize_study_parameters(runtime, args))["status"] == "skipped"

        # A log of reviews a day or more apart, a quarter of them forgotten.
        rng, start = random.Random(7), datetime(2026, 1, 1, tzinfo=UTC)
        rows = []
        for n, item in enumerate(ids):
            at = start + timedelta(hours=n)
            for step in range(10):
                rows.append((item, 1 if rng.random() < 0.25 else 3, at))
                at += timedelta(days=1 + step * rng.uniform(0.5, 2))
        assert len(rows) >= MIN_REVIEWS
        async with pool.connection() as conn:
            for item, rating, at in rows:
                await conn.execute(
                    "INSERT INTO study_reviews"
                    " (project_id, user_id, question_id, rating, source, reviewed_at)"
                    " VALUES (%s, %s, %s, %s, 'review', %s)",
                    (project.id, user.id, item, rating, at),
                )
        result = await optimize_study_parameters(runtime, args)
        assert result == {"status": "fitted", "reviews": len(rows)}
        # Its jobs row (migration 0019; adopted here, as one queued before it would be) says so.
        cur = await db.execute(
            "SELECT kind, status, created_by, result FROM jobs WHERE id = %s", (OPTIMIZE_STUDY.job_id(args),)
        )
        assert await cur.fetchone() == {
            "kind": "optimize_study", "status": "succeeded", "created_by": user.id, "result": result
        }  # fmt: skip
        async with pool.connection() as conn:
            settings = await study.get_settings(conn, **scope)
        assert settings is not None and settings.optimized_reviews == len(rows)
        assert len(settings.parameters) == 21  # type: ignore[arg-type]
        # Fitted once: the next run waits for another MIN_REVIEWS reviews.
        assert (await optimize_study_parameters(runtime, args))["status"] == "skipped"

"""What every agent request leaves behind: its LangGraph run config (run id, tracing callbacks), one
query_history row, one JSON log line, and, for a sampled RAG answer, a queued groundedness judgement.

Built per request from what the app's lifespan opened (pool, settings, queue, tracing, the sampler's
random.Random), so nothing here is global and tests can seed the sampler. It borrows a connection only
for the history row's insert, so callers record after their model call, holding no connection."""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID

from arq.connections import ArqRedis
from fastapi import Depends, Request
from psycopg_pool import AsyncConnectionPool

from backend.deps import ProjectAccess
from backend.observability import log_json, request_id
from core import timing
from core.queue import AGENT_QUEUE, JUDGE_ANSWER
from core.settings import Settings
from core.store import history

if TYPE_CHECKING:
    from agents.common.context import AgentContext
    from core.tracing import Tracing

log = logging.getLogger(__name__)


def sample_rate(project: dict[str, Any], settings: Settings) -> float:
    """The project's own rate when it set one, else GROUNDEDNESS_SAMPLE_RATE. A project's own rate is
    held to GROUNDEDNESS_SAMPLE_RATE_MAX (one stored before the cap, or before it was lowered)."""
    own = project.get("groundedness_sample_rate")
    if own is None:
        return settings.groundedness_sample_rate
    return min(float(own), settings.groundedness_sample_rate_max)


def sampled(rate: float, rng: random.Random) -> bool:
    """True with probability `rate` (rate 1 always, rate 0 never)."""
    return rng.random() < rate


@dataclass
class Audit:
    request_id: str
    pool: AsyncConnectionPool
    settings: Settings
    queue: ArqRedis
    tracing: Tracing | None
    sampler: random.Random
    run_id: UUID = field(default_factory=uuid.uuid4)
    started: float = field(default_factory=timing.mark)

    def elapsed_ms(self) -> float:
        return timing.elapsed_ms(self.started, 1)

    def run_config(self) -> dict[str, Any]:
        """LangGraph's config for the agent run: its id is the one stored, and LangSmith feedback on it."""
        return {"run_id": self.run_id, "callbacks": self.tracing.callbacks() if self.tracing else []}

    async def record(
        self,
        access: ProjectAccess,
        *,
        agent: str,
        question: str,
        answer: str | None = None,
        outcome: str | None = None,
        retrieved: Sequence[int] = (),
        cited: Sequence[int] = (),
        timings_ms: dict[str, float] | None = None,
        tokens: dict[str, dict[str, int]] | None = None,
        judge: bool = False,
        **log_fields: Any,
    ) -> UUID | None:
        """Stores the history row (unless retention is 0 days), queues the answer's judgement when
        `judge` and the sampler says so, and logs the request's one JSON line. The row's id, if any."""
        timings = dict(timings_ms or {})
        timings.setdefault("total", self.elapsed_ms())
        query_id = None
        if self.settings.query_history_retention_days > 0:
            async with self.pool.connection() as conn:
                query_id = await history.insert_query(
                    conn,
                    project_id=access.id,
                    user_id=access.user.id,
                    agent=agent,
                    question=question,
                    answer=answer,
                    outcome=outcome,
                    retrieved_chunk_ids=retrieved,
                    cited_chunk_ids=cited,
                    timings_ms=timings,
                    tokens=tokens,
                    request_id=self.request_id,
                    run_id=self.run_id,
                )
        # Judging reads the stored answer: with no row (retention 0) there is nothing to judge; with
        # EVALUATION_RETENTION_DAYS 0 no evaluation (a copy of the student's text) may be kept.
        keeps_evaluations = self.settings.evaluation_retention_days > 0
        judged = bool(
            judge
            and query_id
            and keeps_evaluations
            and sampled(sample_rate(access.project, self.settings), self.sampler)
        )
        if judged:
            judged = await self._enqueue_judgement(access, query_id)
        log_json(
            logging.INFO,
            agent,
            request_id=self.request_id,
            run_id=str(self.run_id),
            project_id=str(access.id),
            query_id=str(query_id) if query_id else None,
            outcome=outcome,
            retrieved=len(retrieved),
            cited=len(cited),
            judge_sampled=judged,
            timings_ms=timings,
            tokens=tokens or {},
            **log_fields,
        )
        return query_id

    async def record_failure(
        self,
        access: ProjectAccess,
        error: BaseException,
        *,
        agent: str,
        question: str,
        ctx: AgentContext | None = None,
    ) -> UUID | None:
        """A request whose agent run failed: its row and line say which error type, never its text."""
        return await self.record(
            access,
            agent=agent,
            question=question,
            outcome="error",
            timings_ms=ctx.timings_ms if ctx else None,
            tokens=ctx.usage.by_model if ctx else None,
            error_type=type(error).__name__,
        )

    async def _enqueue_judgement(self, access: ProjectAccess, query_id: UUID | None) -> bool:
        try:
            await self.queue.enqueue_job(
                JUDGE_ANSWER,
                str(access.id),
                str(access.user.id),
                str(query_id),
                _job_id=f"judge:{query_id}",
                _queue_name=AGENT_QUEUE,
            )
        except Exception as error:  # the answer stands; only its sampled check is lost
            log.warning("could not enqueue the judgement of %s: %s", query_id, type(error).__name__)
            return False
        return True


def get_audit(request: Request) -> Audit:
    state = request.app.state
    return Audit(
        request_id=request_id(request),
        pool=state.pool,
        settings=state.settings,
        queue=state.queue,
        tracing=getattr(state, "tracing", None),
        sampler=state.sampler,
    )


AuditDep = Annotated[Audit, Depends(get_audit)]

"""What every agent run leaves behind: its LangGraph run config (run id, tracing callbacks), one
query_history row, one JSON log line, and, for a sampled RAG answer, a queued groundedness judgement
with its jobs row (in the history row's transaction).

Built per request (or job) from what the runtime opened (pool, settings, queue, tracing, the sampler's
random.Random), so nothing here is global and tests can seed the sampler. It borrows a connection only
for the history row's insert, so callers record after their model call, holding no connection."""

from __future__ import annotations

import logging
import random
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

from arq.connections import ArqRedis
from psycopg_pool import AsyncConnectionPool

from core.jobs.specs import JUDGE_ANSWER, JudgeAnswer, enqueue
from core.observability import timing
from core.observability.jsonlog import log_json
from core.settings import Settings
from core.store.runs import agent_jobs, history

if TYPE_CHECKING:
    from agents.common.context import AgentContext
    from core.observability.tracing import Tracing

log = logging.getLogger(__name__)


class Member(Protocol):
    @property
    def id(self) -> UUID: ...


class ProjectRate(Protocol):
    @property
    def groundedness_sample_rate(self) -> float | None: ...  # None: the server's GROUNDEDNESS_SAMPLE_RATE


class Caller(Protocol):
    """Who an agent runs for: the API's ProjectAccess (the membership check's result), or a job's own."""

    @property
    def id(self) -> UUID: ...  # the project's

    @property
    def user(self) -> Member: ...

    @property
    def project(self) -> ProjectRate: ...


@dataclass(frozen=True)
class JobUser:
    id: UUID


@dataclass(frozen=True)
class JobProject:
    groundedness_sample_rate: float | None = None


@dataclass(frozen=True)
class JobCaller:
    """A worker job's caller: the project it runs in and the user it runs for."""

    id: UUID
    user: JobUser
    project: JobProject = JobProject()

    @classmethod
    def of(cls, project_id: UUID, user_id: UUID, rate: float | None = None) -> JobCaller:
        return cls(project_id, JobUser(user_id), JobProject(rate))


def sample_rate(own: float | None, settings: Settings) -> float:
    """The project's own rate (`own`) when it set one, else GROUNDEDNESS_SAMPLE_RATE. A project's own
    rate is held to GROUNDEDNESS_SAMPLE_RATE_MAX (one stored before the cap, or before it was lowered)."""
    if own is None:
        return settings.groundedness.sample_rate
    return min(float(own), settings.groundedness.sample_rate_max)


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
        self, access: Caller, run: history.RunRecord, *, judge: bool = False, **log_fields: Any
    ) -> UUID | None:
        """Stores the history row (unless retention is 0 days) with, when `judge` and the sampler says
        so, its judgement's queued jobs row (one transaction: a sampled answer is never left without its
        job), enqueues that job, and logs the request's one JSON line. The row's id, if any."""
        timings = dict(run.timings_ms or {})
        timings.setdefault("total", self.elapsed_ms())
        query_id = None
        wants_judgement = judged = False
        if self.settings.retention.query_history_days > 0:
            # Judging reads the stored answer: with no row (retention 0) there is nothing to judge; with
            # EVALUATION_RETENTION_DAYS 0 no evaluation (a copy of the student's text) may be kept.
            wants_judgement = (
                judge
                and self.settings.retention.evaluation_days > 0
                and sampled(sample_rate(access.project.groundedness_sample_rate, self.settings), self.sampler)
            )
            async with self.pool.connection() as conn, conn.transaction():
                query_id = await history.insert_query(
                    conn,
                    project_id=access.id,
                    user_id=access.user.id,
                    run=replace(run, timings_ms=timings),
                    request_id=self.request_id,
                    run_id=self.run_id,
                )
                if wants_judgement and query_id is not None:
                    judged = await agent_jobs.record_judge_job(
                        conn,
                        project_id=access.id,
                        user_id=access.user.id,
                        query_id=query_id,
                        job_id=JUDGE_ANSWER.job_id(JudgeAnswer(access.id, access.user.id, query_id)),
                        backlog_max=self.settings.groundedness.backlog_max,
                    )
        if judged and query_id is not None:
            await self._enqueue_judgement(access, query_id)
        log_json(
            logging.INFO,
            run.agent,
            request_id=self.request_id,
            run_id=str(self.run_id),
            project_id=str(access.id),
            query_id=str(query_id) if query_id else None,
            outcome=run.outcome,
            retrieved=len(run.retrieved_chunk_ids),
            cited=len(run.cited_chunk_ids),
            judge_sampled=judged,
            judge_backlog_full=wants_judgement and not judged,
            timings_ms=timings,
            tokens=run.tokens or {},
            **log_fields,
        )
        return query_id

    async def record_failure(
        self,
        access: Caller,
        error: BaseException,
        *,
        agent: str,
        question: str,
        ctx: AgentContext | None = None,
    ) -> UUID | None:
        """A request whose agent run failed: its row and line say which error type, never its text."""
        run = history.RunRecord(
            agent,
            question,
            outcome="error",
            timings_ms=ctx.timings_ms if ctx else None,
            tokens=ctx.usage.by_model if ctx else None,
        )
        return await self.record(access, run, error_type=type(error).__name__)

    async def _enqueue_judgement(self, access: Caller, query_id: UUID) -> None:
        try:
            await enqueue(self.queue, JUDGE_ANSWER, JudgeAnswer(access.id, access.user.id, query_id))
        except Exception as error:  # its jobs row stays queued: the agents worker's next start enqueues it
            log.warning("could not enqueue the judgement of %s: %s", query_id, type(error).__name__)

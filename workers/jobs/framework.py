"""One lifecycle for every job, and the one place arq's ctx is read.

A job is a spec (core/jobs/specs.py) with a body `run(runtime, args)`. `Job` runs the body as it is
(the purge cron: no jobs row). `TrackedJob` wraps it in the jobs row's lifecycle (index, note, judge
and study-optimizer jobs): a job whose worker died under it runs alone (workers/jobs/quarantine.py), within
its own time limit, its deaths counted, a graceful stop putting it back to `queued`, and every failure
written to the row with the reason shown to the user."""

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar
from uuid import UUID

import psycopg
from arq import Retry
from arq.cron import CronJob, cron
from arq.worker import Function, func
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from core.jobs.specs import JobSpec
from core.runtime import Runtime
from core.settings import Settings
from core.store.runs import jobs
from workers.jobs.quarantine import Quarantine

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    class ProjectArgs(DataclassInstance, Protocol):
        """A tracked job's arguments: its jobs row belongs to this project."""

        project_id: UUID


log = logging.getLogger(__name__)

A = TypeVar("A", bound="DataclassInstance")
P = TypeVar("P", bound="ProjectArgs")
Result = dict[str, Any]  # what arq keeps as the job's result: JSON-like
ArqContext = dict[str, Any]  # arq's own type for the ctx it hands job functions

# Failures worth another try: the database or the network blinked, not the file.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (psycopg.OperationalError, ConnectionError, TimeoutError)
# arq's own try counter also counts restarts after a death or a graceful stop; past max_tries arq drops
# a job without calling it, which would leave its jobs row `running`. So arq's limit is only a backstop:
# the jobs table decides (JOB_MAX_TRIES for transient errors, JOB_MAX_DEATHS for deaths).
ARQ_MAX_TRIES = 100
# arq's timeout is a backstop too: the job's own limit (INDEX_/NOTE_JOB_TIMEOUT_S) fires first and
# records the reason, while arq's cancellation would leave the row `running`.
ARQ_TIMEOUT_MARGIN_S = 60.0
_RESOURCES = "studyai"  # the key of WorkerResources in arq's ctx


class JobAbandoned(Exception):
    """The job cannot finish and should not retry; the message is the reason shown to the user."""


@dataclass(frozen=True)
class WorkerResources:
    """What a worker process hands its jobs: the runtime, and one quarantine shared by its Workers."""

    runtime: Runtime
    quarantine: Quarantine = field(default_factory=Quarantine)

    def arq_context(self) -> ArqContext:
        return {_RESOURCES: self}


@dataclass(frozen=True)
class Attempt:
    """What arq says about this run of a job."""

    resources: WorkerResources
    job_try: int  # 1 on the first run; arq counts retries, deaths and graceful stops alike


def unwrap(ctx: ArqContext) -> Attempt:
    """The one place arq's ctx is read (a Worker built without resources fails its jobs here)."""
    resources = ctx.get(_RESOURCES)
    if not isinstance(resources, WorkerResources):
        raise RuntimeError("this worker was built without its resources (build_worker(..., resources=))")
    job_try = ctx.get("job_try", 1)
    return Attempt(resources, job_try if isinstance(job_try, int) else 1)


@dataclass(frozen=True)
class Failure:
    reason: str  # written to the jobs row: what the user reads
    error: str | None = None  # the job's result says this instead, when it differs


class Job(ABC, Generic[A]):
    """A job kind: its spec, arq's try limit for it, and its body."""

    spec: JobSpec[A]
    max_tries: int = 2  # arq's: a worker that died mid-job reruns it once
    # How long arq keeps the result (None: the Worker's keep_result). arq refuses to enqueue a job id
    # whose result it keeps, so a job asked for again under the same id soon after says 0.
    keep_result_s: float | None = None

    @abstractmethod
    async def run(self, runtime: Runtime, args: A) -> Result:
        """The job's own work, given the process's runtime and its typed arguments."""

    def arq_timeout_s(self, settings: Settings) -> float | None:
        return None  # the Worker's job_timeout

    async def __call__(
        self, runtime: Runtime, args: A, *, job_try: int = 1, quarantine: Quarantine | None = None
    ) -> Result:
        return await self.run(runtime, args)

    def arq_function(self, settings: Settings) -> Function:
        """The function arq calls by the spec's name: ctx unwrapped, the wire arguments typed."""

        async def coroutine(ctx: ArqContext, *positional: object, **keywords: object) -> Result:
            attempt = unwrap(ctx)
            args = self.spec.decode(positional, keywords)
            quarantine = attempt.resources.quarantine
            return await self(attempt.resources.runtime, args, job_try=attempt.job_try, quarantine=quarantine)

        return func(
            coroutine,
            name=self.spec.name,
            max_tries=self.max_tries,
            timeout=self.arq_timeout_s(settings),
            keep_result=self.keep_result_s,
        )


class FunctionJob(Job[A]):
    """A job whose body is a plain function and which keeps no jobs row."""

    def __init__(
        self, spec: JobSpec[A], body: Callable[[Runtime, A], Awaitable[Result]], *, max_tries: int = 2
    ) -> None:
        self.spec = spec
        self.max_tries = max_tries
        self._body = body

    async def run(self, runtime: Runtime, args: A) -> Result:
        return await self._body(runtime, args)


# A unique cron's one job id: the workers that start together (each runs it at start-up) or tick
# together enqueue the same id, and arq takes it once while its result is kept. arq's own unique id
# holds the run's time, which differs per worker for a start-up run, so each ran it.
CRON_ONCE_S = 600


def arq_cron(job: Job[A], args: A, **schedule: Any) -> CronJob:
    """A job run on a schedule (arq's cron hands it the ctx alone); `unique=True`: once across the
    workers for runs less than CRON_ONCE_S apart (the hourly ones are further apart)."""

    async def coroutine(ctx: ArqContext) -> Result:
        return await job(unwrap(ctx).resources.runtime, args)

    if schedule.get("unique"):
        schedule = {"job_id": f"cron:{job.spec.name}", "keep_result": CRON_ONCE_S} | schedule
    return cron(coroutine, name=job.spec.name, **schedule)


class TrackedJob(Job[P]):
    """A job with a jobs row (id: its spec's job id). Subclasses say how it starts, what its limit is,
    how its failures read, and what else a failure marks."""

    max_tries = ARQ_MAX_TRIES
    # Transient errors (TRANSIENT_ERRORS) retried up to JOB_MAX_TRIES, then failed with this reason;
    # None: they fail the job like any other error.
    transient_reason: str | None = None
    died_reason: str  # the reason once JOB_MAX_DEATHS deaths are on record
    timeout_reason: str  # the reason when the time limit stops it; "{limit_s:g}" stands for the limit

    @abstractmethod
    def time_limit_s(self, settings: Settings) -> float: ...

    @abstractmethod
    async def start(self, conn: AsyncConnection[Any], args: P) -> int | Result:
        """Marks the row running for this attempt: its deaths so far, or the result to return at once
        (the job must not run)."""

    def known_failure(self, error: Exception) -> Failure | None:
        """The reason for an error the job expects (None: unforeseen, logged with its traceback)."""
        return None

    @abstractmethod
    def unforeseen_failure(self, error: Exception) -> Failure: ...

    async def record_failure(self, conn: AsyncConnection[Any], args: P, reason: str) -> None:
        job_id = self.spec.job_id(args)
        await jobs.fail_job(conn, project_id=args.project_id, job_id=job_id, error=reason)

    def arq_timeout_s(self, settings: Settings) -> float | None:
        return self.time_limit_s(settings) + ARQ_TIMEOUT_MARGIN_S

    async def __call__(
        self, runtime: Runtime, args: P, *, job_try: int = 1, quarantine: Quarantine | None = None
    ) -> Result:
        """One attempt within the time limit. A job whose worker died under it before runs alone; one
        that a graceful stop cancels goes back to `queued` for arq to rerun."""
        project_id, job_id = args.project_id, self.spec.job_id(args)
        try:
            async with runtime.pool.connection() as conn:
                state = await jobs.attempt_state(conn, project_id=project_id, job_id=job_id)
        except TRANSIENT_ERRORS:  # the attempt's own start meets the same error and retries or fails
            state = None
        suspect = state is not None and (state.status == "running" or state.deaths > 0)
        limit = self.time_limit_s(runtime.settings)
        try:
            # The limit covers a suspect's wait too: arq's own timeout, later, would leave the row running.
            async with asyncio.timeout(limit), (quarantine or Quarantine()).hold(alone=suspect):
                return await self._attempt(runtime, args, job_try)
        except TimeoutError:  # our limit (not an inner TimeoutError: _attempt handles those itself)
            reason = self.timeout_reason.format(limit_s=limit)
            log.error("%s %s: %s", self.spec.name, job_id, reason)
            return await self._fail(runtime.pool, args, Failure(reason))
        except asyncio.CancelledError:  # the worker is stopping: arq reruns the job; this is no death
            await asyncio.shield(_requeue(runtime.pool, project_id=project_id, job_id=job_id))
            raise

    async def _attempt(self, runtime: Runtime, args: P, job_try: int) -> Result:
        job_id = self.spec.job_id(args)
        try:
            async with runtime.pool.connection() as conn:
                started = await self.start(conn, args)
            if not isinstance(started, int):
                return started
            if started:
                log.warning("%s %s: its worker died %d time(s) under it", self.spec.name, job_id, started)
            if started >= runtime.settings.workers.job_max_deaths:
                raise JobAbandoned(self.died_reason)
            return await self.run(runtime, args)
        except JobAbandoned as error:
            return await self._fail(runtime.pool, args, Failure(str(error)))
        except Exception as error:
            # A known failure is final even when its class is transient (a full disk is an OperationalError
            # that another try would only meet again).
            failure = self.known_failure(error)
            if failure is not None:
                return await self._fail(runtime.pool, args, failure)
            if isinstance(error, TRANSIENT_ERRORS) and self.transient_reason is not None:
                if job_try < runtime.settings.workers.job_max_tries:
                    log.warning("transient error on %s, retrying: %r", job_id, error)
                    await _requeue(runtime.pool, project_id=args.project_id, job_id=job_id)
                    raise Retry(defer=job_try * 2) from error  # a retry, not a death
                return await self._fail(runtime.pool, args, Failure(self.transient_reason, repr(error)))
            log.exception("%s %s failed", self.spec.name, job_id)  # a bug, or input nobody foresaw
            return await self._fail(runtime.pool, args, self.unforeseen_failure(error))

    async def _fail(self, pool: AsyncConnectionPool, args: P, failure: Failure) -> Result:
        async with pool.connection() as conn, conn.transaction():
            await self.record_failure(conn, args, failure.reason)
        return {"status": "failed", "error": failure.reason if failure.error is None else failure.error}


async def _requeue(pool: AsyncConnectionPool, *, project_id: UUID, job_id: str) -> None:
    try:
        async with pool.connection() as conn:
            await jobs.requeue_job(conn, project_id=project_id, job_id=job_id)
    except Exception as error:  # the database is what failed: the next start counts a death, at worst
        log.warning("could not mark %s queued again: %r", job_id, error)

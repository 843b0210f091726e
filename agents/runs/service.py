"""One agent run for one caller: its turn at the chat model, the graph (invoked or streamed), what a
failure tells the caller, and the history row it leaves. The API's routes and the worker jobs run
every agent through here; it knows no HTTP (failures are agents/runs/errors.py's domain errors)."""

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypedDict, TypeVar
from uuid import UUID

import httpx
import openai

from agents.common.context import AgentContext
from agents.runs.admission import admitted_model
from agents.runs.audit import Audit, Caller
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.steps import (
    Evidence,
    Failed,
    Finished,
    KeepAlive,
    Queued,
    QueuedTurn,
    Reset,
    Step,
    Token,
    with_keepalive,
)
from core.llm.admission import LlmAdmission, Priority, Ticket
from core.llm.pool import ModelPool, Route
from core.llm.structured import StructuredOutputError
from core.observability.jsonlog import log_failure
from core.store.runs.history import RunRecord

T = TypeVar("T")

# A model server that is down is usually back (restarted by `studyai up`) within seconds.
MODEL_DOWN_RETRY_AFTER_S = 10
# A pool's server gone (connection refused, or dropped mid-reply: a stream's errors come from httpx
# unwrapped), not slow: its run moves to another server.
GONE = (openai.APIConnectionError, httpx.TransportError)
SLOW = (openai.APITimeoutError, httpx.TimeoutException)


class Graph(Protocol):
    """A compiled LangGraph graph, as far as a run uses it."""

    def ainvoke(self, input: Any, config: Any = None, *, context: Any = None) -> Awaitable[Any]: ...

    def astream(
        self, input: Any, config: Any = None, *, context: Any = None, stream_mode: Any = None
    ) -> AsyncIterator[Any]: ...


class Scope(TypedDict):
    """The store's scope of a caller's SQL: the project, and the member whose access it checks."""

    project_id: UUID
    user_id: UUID


@dataclass(frozen=True)
class AgentSpec:
    """An agent as a run knows it: its history rows' name and what a failed run tells the caller."""

    name: str
    unusable: str  # the reply could not be read; "{error}" stands for the parse error's text
    unreachable: str | None = None  # a model that cannot be reached, told as the run's own failure
    # (a row and this text); None leaves it to the caller's generic answer, without a row


@dataclass
class AgentRunner:
    """Runs agents for one caller (a request, or a job) with one context; `audit` None records no row
    (a job's own row tells how it went). Interactive runs hold one slot for the run; background runs
    a slot per model call, behind the interactive ones."""

    caller: Caller
    context: AgentContext
    admission: LlmAdmission
    audit: Audit | None = None
    priority: Priority = "interactive"
    # Several model servers (LLM_BASE_URLS): each run is routed to one, and moved to another when its
    # server cannot be reached (core/llm/pool.py); None: the one server behind `admission`.
    pool: ModelPool | None = None
    _failed: list[Route] = dataclasses.field(default_factory=list)  # servers this runner found down
    _route: Route | None = None  # the server of the run in progress

    @property
    def user(self) -> str:
        return str(self.caller.user.id)

    @property
    def scope(self) -> Scope:
        return {"project_id": self.caller.id, "user_id": self.caller.user.id}

    def run_config(self) -> dict[str, Any] | None:
        return self.audit.run_config() if self.audit else None

    async def reserve(self) -> Ticket:
        """A place in the model's queue, taken before anything is written: AdmissionRejected when full.
        With a pool, in the queue of the server its project is routed to."""
        if self.pool is None:
            return await self.admission.enqueue(user=self.user, priority=self.priority)
        route = await self.pool.choose(str(self.caller.id), avoid=self._failed)
        ticket = await route.admission.enqueue(user=self.user, priority=self.priority)
        ticket.route = route
        return ticket

    def context_for(self, ticket: Ticket) -> AgentContext:
        """The run's context with the chat model of the server its ticket is for."""
        route = ticket.route
        return self.context if route is None else dataclasses.replace(self.context, llm=route.llm)

    async def failed_over(self, error: BaseException, route: Route | None) -> bool:
        """Whether the run goes on another server: its own refused the connection or dropped it mid-reply
        (not a slow answer), and another is left. The server is left out of every process's routing for
        a while."""
        if self.pool is None or route is None or isinstance(error, SLOW):
            return False
        if not isinstance(error, GONE):
            return False
        await self.pool.mark_down(route)
        self._failed.append(route)
        return len(self._failed) < len(self.pool.routes)

    @asynccontextmanager
    async def admitted(
        self, *, ticket: Ticket | None = None, needs_model: bool = True
    ) -> AsyncIterator[AgentContext]:
        """The context to run with, while the run may use the model (freed however the block ends)."""
        if self.priority == "background":
            llm, admission = self.context.llm, self.admission
            if self.pool is not None:
                route = await self.pool.choose(str(self.caller.id), avoid=self._failed)
                llm, admission, self._route = route.llm, route.admission, route
            async with admitted_model(llm, admission, user=self.user) as admitted_llm:
                yield dataclasses.replace(self.context, llm=admitted_llm)  # same usage and timings objects
            return
        if ticket is None and not needs_model:
            yield self.context
            return
        async with ticket or await self.reserve() as held:
            self._route = held.route
            await held.acquired()
            yield self.context_for(held)

    async def invoke(
        self,
        spec: AgentSpec,
        graph: Graph,
        inputs: Any,
        *,
        question: str,
        ticket: Ticket | None = None,
        needs_model: bool = True,
    ) -> dict[str, Any]:
        """The graph's output; UnusableReply (or ModelUnreachable, where the spec says so) after the
        failure's history row."""
        return await self.call(
            spec,
            lambda context: graph.ainvoke(inputs, config=self.run_config(), context=context),
            question=question,
            ticket=ticket,
            needs_model=needs_model,
        )

    async def call(
        self,
        spec: AgentSpec,
        work: Callable[[AgentContext], Awaitable[T]],
        *,
        question: str,
        ticket: Ticket | None = None,
        needs_model: bool = True,
    ) -> T:
        """`work` (a graph run, or any model work: a judge) admitted, its failures mapped as invoke's."""
        try:
            while True:
                self._route = None
                try:
                    async with self.admitted(ticket=ticket, needs_model=needs_model) as context:
                        return await work(context)
                except GONE as error:
                    if not await self.failed_over(error, self._route):
                        raise
                    ticket = None  # the next try queues for another server
        except StructuredOutputError as error:
            await self.record_failure(spec, error, question=question)
            raise UnusableReply(spec.unusable.format(error=error)) from error
        except (openai.APIConnectionError, openai.APITimeoutError) as error:
            if spec.unreachable is None:
                raise
            await self.record_failure(spec, error, question=question)
            raise ModelUnreachable(spec.unreachable, MODEL_DOWN_RETRY_AFTER_S) from error

    async def stream(
        self, spec: AgentSpec, graph: Graph, inputs: Any, *, question: str, ticket: Ticket
    ) -> AsyncGenerator[Step, None]:
        """The run as steps: its place in the queue, then the graph's tokens (custom events), then
        Finished. A failure is one Failed step (after its row): the caller's response has started.
        The slot is freed when the run ends or fails, and when the consumer goes away (the generator
        is closed, and with it the model call)."""
        result: dict[str, Any] = {}
        while True:
            moved = False  # to another server, its own having refused the connection
            async with ticket:
                try:
                    # The graph starts at once: it waits for the slot at its first model call (QueuedTurn),
                    # so retrieval, the gate and the evidence come first, and a gate's "not found" never
                    # queues.
                    context = dataclasses.replace(self.context_for(ticket), model_turn=QueuedTurn(ticket))
                    steps = graph.astream(
                        inputs, config=self.run_config(), context=context, stream_mode=["custom", "values"]
                    )
                    sent: int | None = None
                    spoke = False  # tokens were sent: a run moved elsewhere withdraws them first
                    async for step in with_keepalive(steps):
                        if step is None:  # waiting for the slot, or the model is slow to start
                            yield KeepAlive()
                            continue
                        mode, payload = step
                        if mode != "custom":
                            result = payload
                        elif "queued" in payload:
                            yield Queued(payload["queued"]) if payload["queued"] != sent else KeepAlive()
                            sent = payload["queued"]
                        elif "evidence" in payload:
                            yield Evidence(payload["evidence"])
                        elif payload.get("reset"):
                            yield Reset()
                        else:
                            spoke = True
                            yield Token(payload["token"])
                except Exception as error:
                    moved = await self.failed_over(error, ticket.route)
                    if not moved:
                        self.log_failure(error, route=f"{spec.name}_stream")
                        yield Failed(error)
                        await self._record_failure_quietly(spec, error, question=question)
                        return
            if not moved:
                break
            if spoke:
                yield Reset()
            try:
                ticket = await self.reserve()
            except Exception as error:  # the other servers' queues are full, or Redis is gone
                self.log_failure(error, route=f"{spec.name}_stream")
                yield Failed(error)
                await self._record_failure_quietly(spec, error, question=question)
                return
        yield Finished(result)

    async def record(self, run: RunRecord, *, judge: bool = False, **log_fields: Any) -> UUID | None:
        """The run's history row and log line, with the context's timings and tokens (nothing without
        an audit)."""
        if self.audit is None:
            return None
        measured = dataclasses.replace(
            run, timings_ms=self.context.timings_ms, tokens=self.context.usage.by_model
        )
        return await self.audit.record(self.caller, measured, judge=judge, **log_fields)

    async def record_failure(self, spec: AgentSpec, error: BaseException, *, question: str) -> None:
        if self.audit is not None:
            await self.audit.record_failure(
                self.caller, error, agent=spec.name, question=question, ctx=self.context
            )

    def log_failure(self, error: BaseException, **fields: Any) -> None:
        log_failure(self.audit.request_id if self.audit else "", error, **fields)

    async def _record_failure_quietly(self, spec: AgentSpec, error: Exception, *, question: str) -> None:
        """The failure's history row, when the database can take it: a stream that already told its
        consumer about the failure must end cleanly, not be cut by a second one."""
        try:
            await self.record_failure(spec, error, question=question)
        except Exception as second:
            self.log_failure(second, route=f"{spec.name}_stream_record")

"""The agent-run service (agents/runs/service.py) with a fake admission queue, fake graphs and a fake
audit: what each failure becomes, which runs take a slot, and a stream's steps in order."""

import uuid
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
import openai
import pytest
from langchain_core.language_models import FakeMessagesListChatModel

from agents.common.context import AgentContext
from agents.runs.admission import AdmissionCallback, admitted_model
from agents.runs.audit import Audit, JobCaller
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.service import AgentRunner, AgentSpec
from agents.runs.steps import Evidence, Failed, Finished, KeepAlive, Queued, Reset, Token
from core.llm.admission import LlmAdmission
from core.llm.structured import StructuredOutputError
from core.retrieval import Retriever

SPEC = AgentSpec("agent", unusable="Unreadable: {error}")
REPORTS_DOWN = AgentSpec("agent", unusable="Unreadable.", unreachable="Down; try again.")


class FakeTicket:
    route = None  # the one model server behind the admission (no pool)

    def __init__(self, positions: list[int]) -> None:
        self.positions = positions
        self.acquired_count = 0
        self.released = False

    async def __aenter__(self) -> "FakeTicket":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()

    async def wait(self, *, tick_s: float) -> AsyncIterator[int]:
        for position in self.positions:
            yield position

    async def acquired(self) -> None:
        self.acquired_count += 1

    async def release(self) -> None:
        self.released = True


class FakeAdmission:
    def __init__(self) -> None:
        self.tickets: list[FakeTicket] = []

    async def enqueue(self, *, user: str, priority: str = "interactive") -> FakeTicket:
        self.tickets.append(FakeTicket([2, 2, 1]))
        return self.tickets[-1]


class FakeAudit:
    request_id = "req"

    def __init__(self) -> None:
        self.failures: list[tuple[str, str, str]] = []

    def run_config(self) -> dict[str, Any]:
        return {"run_id": "run"}

    async def record_failure(
        self, caller: Any, error: BaseException, *, agent: str, question: str, ctx: Any
    ) -> None:
        self.failures.append((agent, question, type(error).__name__))


class FakeGraph:
    def __init__(self, *, result: Any = None, error: Exception | None = None, steps: list[Any] | None = None):
        self.result, self.error, self.steps = result, error, steps or []
        self.contexts: list[AgentContext] = []

    async def ainvoke(self, inputs: Any, config: Any = None, *, context: Any = None) -> Any:
        self.contexts.append(context)
        if self.error is not None:
            raise self.error
        return self.result

    async def astream(
        self, inputs: Any, config: Any = None, *, context: Any = None, stream_mode: Any = None
    ) -> AsyncIterator[Any]:
        """`evidence` steps come before the model is needed; then, as a model node does, the run's
        turn at the model is waited for (its queue positions written as custom steps)."""
        steps = list(self.steps)
        while steps and "evidence" in steps[0][1]:
            yield steps.pop(0)
        waits: list[Any] = []
        await context.wait_for_model(waits.append)
        for payload in waits:
            yield ("custom", payload)
        for step in steps:
            yield step
        if self.error is not None:
            raise self.error


def runner(priority: str = "interactive") -> tuple[AgentRunner, FakeAdmission, FakeAudit]:
    admission, audit = FakeAdmission(), FakeAudit()
    context = AgentContext(
        project_id=uuid.uuid4(),
        retriever=cast(Retriever, None),
        llm=FakeMessagesListChatModel(responses=[]),
        structured_mode="json_schema",
    )
    run = AgentRunner(
        caller=JobCaller.of(context.project_id, uuid.uuid4()),
        context=context,
        admission=cast(LlmAdmission, admission),
        audit=cast(Audit, audit),
        priority=priority,  # type: ignore[arg-type]
    )
    return run, admission, audit


def unreachable() -> openai.APIConnectionError:
    return openai.APIConnectionError(request=httpx.Request("POST", "http://model.test"))


async def test_a_run_holds_one_slot_and_returns_the_graph_output() -> None:
    run, admission, audit = runner()
    assert await run.invoke(SPEC, FakeGraph(result={"answer": 42}), {}, question="q") == {"answer": 42}
    (ticket,) = admission.tickets
    assert ticket.acquired_count == 1 and ticket.released and audit.failures == []


async def test_a_run_without_the_model_takes_no_slot() -> None:
    run, admission, _ = runner()
    await run.invoke(SPEC, FakeGraph(result={}), {}, question="q", needs_model=False)
    assert admission.tickets == []


async def test_an_unreadable_reply_is_unusable_after_its_failure_row() -> None:
    run, admission, audit = runner()
    with pytest.raises(UnusableReply, match="Unreadable: bad json") as raised:
        await run.invoke(SPEC, FakeGraph(error=StructuredOutputError("bad json")), {}, question="q")
    assert isinstance(raised.value.__cause__, StructuredOutputError)
    assert audit.failures == [("agent", "q", "StructuredOutputError")] and admission.tickets[0].released


async def test_an_unreachable_model_is_the_runs_own_failure_only_where_the_spec_says() -> None:
    run, _, audit = runner()
    with pytest.raises(openai.APIConnectionError):
        await run.invoke(SPEC, FakeGraph(error=unreachable()), {}, question="q")
    assert audit.failures == []
    with pytest.raises(ModelUnreachable, match="Down; try again") as raised:
        await run.invoke(REPORTS_DOWN, FakeGraph(error=unreachable()), {}, question="q")
    assert raised.value.retry_after > 0 and audit.failures == [("agent", "q", "APIConnectionError")]


async def test_a_stream_reports_its_place_then_tokens_then_the_result() -> None:
    run, admission, _ = runner()
    steps = [("custom", {"token": "a"}), ("custom", {"reset": True}), ("custom", {"token": "b"})]
    evidence = ("custom", {"evidence": [{"chunk_id": 7}]})
    graph = FakeGraph(steps=[evidence, *steps, ("values", {"answer": "b"})])
    ticket = await run.reserve()
    got = [step async for step in run.stream(SPEC, graph, {}, question="q", ticket=ticket)]
    assert got == [
        Evidence([{"chunk_id": 7}]),  # before the wait for the model
        Queued(2),
        KeepAlive(),
        Queued(1),
        Queued(0),  # its turn came: a client stops showing a place in the queue
        Token("a"),
        Reset(),
        Token("b"),
        Finished({"answer": "b"}),
    ]
    assert admission.tickets[0].released


async def test_a_stream_that_fails_ends_with_one_failed_step_after_its_row() -> None:
    run, _, audit = runner()
    graph = FakeGraph(steps=[("custom", {"token": "a"})], error=unreachable())
    ticket = await run.reserve()
    got = [step async for step in run.stream(SPEC, graph, {}, question="q", ticket=ticket)]
    assert isinstance(got[-1], Failed) and not got[-1].saving and Token("a") in got
    assert audit.failures == [("agent", "q", "APIConnectionError")]


async def test_a_background_run_admits_each_model_call_once() -> None:
    run, admission, _ = runner("background")
    graph = FakeGraph(result={})
    await run.invoke(SPEC, graph, {}, question="q")
    (context,) = graph.contexts
    handlers = [h for h in cast(list[Any], context.llm.callbacks) if isinstance(h, AdmissionCallback)]
    assert len(handlers) == 1 and admission.tickets == []  # a slot per model call, none for the run
    async with admitted_model(context.llm, cast(LlmAdmission, admission), user="u") as again:
        assert again is context.llm  # admitted already: no second slot per call

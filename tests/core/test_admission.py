"""The chat model's admission queue on the real (embedded) Redis: fairness between users, interactive
before background, the bound, cancellation, lapsed leases, and the worker's per-call admission."""

import asyncio
import gc
import uuid
from collections.abc import AsyncIterator

import pytest
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from redis.asyncio import Redis

from agents.runs.admission import admitted_model
from core.llm.admission import AdmissionRejected, LlmAdmission, Ticket
from core.runtime import ChatModelPlan
from core.runtime.services import ServiceUrls
from core.settings import Settings


@pytest.fixture
async def redis(services: ServiceUrls) -> AsyncIterator[Redis]:
    client = Redis.from_url(services.redis_url)
    yield client
    await client.aclose()


def queue(redis: Redis, concurrency: int = 1, queue_max: int = 64, lease_s: float = 10.0) -> LlmAdmission:
    """A queue of the test's own (a fresh namespace), polling fast."""
    return LlmAdmission(
        redis, concurrency=concurrency, queue_max=queue_max, lease_s=lease_s, poll_s=0.02,
        namespace=f"test-admission:{uuid.uuid4().hex}",
    )  # fmt: skip


async def position_becomes(ticket: Ticket, expected: int, timeout: float = 10) -> None:
    async def watch() -> None:
        async for position in ticket.wait(tick_s=0.05):
            if position == expected:
                return
        assert expected == 0  # granted

    await asyncio.wait_for(watch(), timeout)


async def run_in_grant_order(tickets: list[Ticket], order: list[str]) -> None:
    async def use(ticket: Ticket) -> None:
        async with ticket:
            await ticket.acquired()
            order.append(ticket.user)
            await asyncio.sleep(0.01)

    await asyncio.wait_for(asyncio.gather(*(use(t) for t in tickets)), 30)


async def test_a_user_looping_does_not_starve_a_later_one(redis: Redis) -> None:
    admission = queue(redis)
    holder = await admission.enqueue(user="someone")
    assert holder.granted
    looping = [await admission.enqueue(user="looper") for _ in range(10)]
    assert [t.position for t in looping] == list(range(1, 11))
    later = await admission.enqueue(user="later")
    order: list[str] = []
    run = asyncio.ensure_future(run_in_grant_order([*looping, later], order))
    await holder.release()
    await run
    # The later user's one request is served after at most one of the looper's ten.
    assert order.index("later") <= 1, order
    assert sorted(order) == ["later"] + ["looper"] * 10


async def test_arrivals_after_a_grant_are_interleaved(redis: Redis) -> None:
    admission = queue(redis)
    holder = await admission.enqueue(user="x")
    a = [await admission.enqueue(user="a") for _ in range(3)]
    b = [await admission.enqueue(user="b") for _ in range(3)]
    order: list[str] = []
    run = asyncio.ensure_future(run_in_grant_order([*a, *b], order))
    await holder.release()
    await run
    assert order == ["a", "b", "a", "b", "a", "b"]


async def test_interactive_requests_go_before_background_jobs(redis: Redis) -> None:
    admission = queue(redis)
    holder = await admission.enqueue(user="x")
    job = await admission.enqueue(user="worker-user", priority="background")
    asked = await admission.enqueue(user="student")
    # The background job arrived first, yet the interactive request is ahead of it.
    assert asked.position == 1
    await position_becomes(job, 2)
    order: list[str] = []
    run = asyncio.ensure_future(run_in_grant_order([job, asked], order))
    await holder.release()
    await run
    assert order == ["student", "worker-user"]


async def test_a_full_queue_rejects_with_a_retry_after(redis: Redis) -> None:
    admission = queue(redis, concurrency=1, queue_max=2)
    holder = await admission.enqueue(user="a")
    waiting = [await admission.enqueue(user="b"), await admission.enqueue(user="c")]
    with pytest.raises(AdmissionRejected) as rejected:
        await admission.enqueue(user="d")
    assert 1 <= rejected.value.retry_after <= 300
    # Background jobs are bounded by the workers' job slots, not rejected.
    job = await admission.enqueue(user="d", priority="background")
    assert job.position == 3
    for ticket in [holder, *waiting, job]:
        await ticket.release()
    # Room again: the next request is granted at once.
    async with admission.slot(user="d") as ticket:
        assert ticket.granted


async def test_cancelled_waiters_and_holders_free_their_place(redis: Redis) -> None:
    admission = queue(redis)
    holding = asyncio.Event()

    async def hold() -> None:
        async with admission.slot(user="holder"):
            holding.set()
            await asyncio.Event().wait()

    holder = asyncio.ensure_future(hold())
    await asyncio.wait_for(holding.wait(), 10)
    queued = asyncio.Event()

    async def wait_in_line() -> None:
        async with await admission.enqueue(user="waiter") as ticket:
            queued.set()
            await ticket.acquired()

    waiter = asyncio.ensure_future(wait_in_line())
    await asyncio.wait_for(queued.wait(), 10)
    last = await admission.enqueue(user="last")
    await position_becomes(last, 2)
    waiter.cancel()  # a client that went away while waiting
    await position_becomes(last, 1)
    holder.cancel()  # ... and one that went away while its answer was being written
    await position_becomes(last, 0, timeout=5)
    assert last.granted
    await last.release()


async def test_a_dead_holders_lease_lapses_and_a_silent_waiter_is_dropped(redis: Redis) -> None:
    admission = queue(redis, lease_s=1.0)
    started = asyncio.get_running_loop().time()
    dead = await admission.enqueue(user="dead")
    assert dead.granted
    silent = await admission.enqueue(user="silent")  # never polls
    alive = await admission.enqueue(user="alive")
    assert alive.position == 2
    # The holder's process "dies": nothing renews its lease any more (a dropped ticket stops renewing).
    del dead, silent
    gc.collect()
    await position_becomes(alive, 0, timeout=10)
    assert asyncio.get_running_loop().time() - started >= 0.9  # not before the lease ran out
    await alive.release()


async def test_worker_model_calls_wait_their_turn_as_background(
    redis: Redis, settings: Settings, services: ServiceUrls
) -> None:
    """Each model call of a worker job takes a background slot of the shared queue (the settings' own,
    as the worker builds it) and frees it when the call ends."""
    plan = ChatModelPlan.decide(settings, services)
    admission = LlmAdmission.for_plan(redis, settings, plan)  # the embedded model: one call per slot
    assert admission.concurrency == settings.llm.slots
    model = FakeMessagesListChatModel(responses=[AIMessage("hi")])
    holders = [await admission.enqueue(user=f"student-{n}") for n in range(admission.concurrency)]
    async with admitted_model(model, admission, user="note-author") as llm:
        call = asyncio.ensure_future(llm.ainvoke("hello"))
        await asyncio.sleep(0.6)
        assert not call.done()  # interactive requests hold every slot
        await holders[0].release()
        reply = await asyncio.wait_for(call, 10)
        for holder in holders[1:]:
            await holder.release()
    assert reply.content == "hi"
    # Freed after the call: an interactive request is granted at once.
    async with admission.slot(user="student") as ticket:
        assert ticket.granted

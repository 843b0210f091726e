"""One admission queue in front of the chat model, shared through Redis by every API process and worker.

At most `concurrency` requests use the model at once; the others wait in a bounded queue, granted in
start-time fair queueing order per user (one student looping cannot starve the others), interactive
requests always before background jobs. A holder keeps its slot with a lease it renews while held, and a
waiter keeps its place by polling, so a process killed with -9 frees both within seconds. Every queue
change is one Lua script (core/llm/admission_script.py), atomic across processes."""

import asyncio
import logging
import math
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from redis.asyncio import Redis
from redis.exceptions import RedisError

from core.llm import admission_script
from core.settings import Settings

if TYPE_CHECKING:
    from core.llm.pool import Route
    from core.runtime.chat_plan import ChatModelPlan

log = logging.getLogger(__name__)

Priority = Literal["interactive", "background"]
_KEYS = ("wait:interactive", "wait:background", "wait_deadlines", "holders", "granted_at", "vtime",
         "last:interactive", "last:background", "stats")  # fmt: skip
# Retry-After when the queue has no history yet (no slot was released): one short answer's time.
_DEFAULT_HOLD_S = 10.0
_MAX_RETRY_AFTER_S = 300


class AdmissionRejected(Exception):
    """The queue is full; `retry_after` (seconds) estimates when a place should be free."""

    def __init__(self, retry_after: int, waiting: int) -> None:
        super().__init__(f"The chat model's queue is full ({waiting} waiting); retry in {retry_after} s.")
        self.retry_after = retry_after
        self.waiting = waiting


class LlmAdmission:
    def __init__(
        self,
        redis: Redis,
        *,
        concurrency: int,
        queue_max: int,
        lease_s: float = 10.0,
        poll_s: float = 0.25,
        namespace: str = "studyai:llm",
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.queue_max = queue_max
        self.lease_s = lease_s
        self.poll_s = poll_s
        self._redis = redis
        self._keys = [f"{namespace}:{key}" for key in _KEYS]
        self._enqueue = redis.register_script(admission_script.ENQUEUE)
        self._poll = redis.register_script(admission_script.POLL)
        self._release = redis.register_script(admission_script.RELEASE)
        # Releases and renewals run as tasks of their own (a cancelled request still frees its slot);
        # asyncio keeps only weak references to tasks, so they are held here until done.
        self._tasks: set[asyncio.Task[Any]] = set()

    @classmethod
    def for_plan(cls, redis: Redis, settings: Settings, plan: "ChatModelPlan") -> "LlmAdmission":
        queue_max, lease_s = settings.llm.queue_max, settings.llm.lease_s
        return cls(redis, concurrency=plan.concurrency, queue_max=queue_max, lease_s=lease_s)

    @property
    def _lease_ms(self) -> int:
        return max(1, int(self.lease_s * 1000))

    @property
    def _wait_ms(self) -> int:
        # A waiter polls every poll_s; a few missed polls (a busy event loop) must not cost its place.
        return max(self._lease_ms, int(self.poll_s * 20_000))

    async def enqueue(self, *, user: str, priority: Priority = "interactive") -> "Ticket":
        """A place in the queue (or a slot at once when one is free). Raises AdmissionRejected when
        `queue_max` interactive requests already wait; background jobs are never rejected."""
        args = [priority, user, self.concurrency, self.queue_max, self._lease_ms, self._wait_ms]
        reply = await self._enqueue(keys=self._keys, args=args)
        ticket_id, position = _text(reply[0]), int(reply[1])
        if position < 0:
            waiting, hold_ms = int(reply[2]), int(reply[3])
            raise AdmissionRejected(self.retry_after(waiting, hold_ms), waiting)
        ticket = Ticket(self, ticket_id, user=user, priority=priority, position=position)
        if position == 0:
            ticket._start_renewing()
        return ticket

    async def publish_slots(self, slots: int) -> None:
        """Makes `slots` the count every caller of this queue admits (the scripts read it first)."""
        await self._redis.hset(self._keys[8], "slots", str(slots))  # type: ignore[misc]  # redis-py's union

    async def load(self) -> tuple[int, int, int]:
        """(holders, waiting, slots) now: how busy the endpoint behind this queue is. Only live leases and
        places count (Redis's clock, as the scripts'): a killed holder stops counting when its lease ends."""
        seconds, micros = await self._redis.time()
        now_ms = int(seconds) * 1000 + int(micros) // 1000
        pipe = self._redis.pipeline(transaction=False)
        pipe.zcount(self._keys[3], now_ms, "+inf")
        pipe.zcount(self._keys[2], now_ms, "+inf")
        pipe.hget(self._keys[8], "slots")
        holders, waiting, shared = await pipe.execute()
        return int(holders), int(waiting), int(shared or self.concurrency)

    def retry_after(self, waiting: int, hold_ms: int) -> int:
        """Seconds until the queue should have room: the waiting requests ahead, `concurrency` at a
        time, each taking the recent average hold time."""
        hold_s = hold_ms / 1000 if hold_ms > 0 else _DEFAULT_HOLD_S
        rounds = max(1, waiting - self.queue_max + 1) / self.concurrency
        return max(1, min(_MAX_RETRY_AFTER_S, math.ceil(rounds * hold_s)))

    @asynccontextmanager
    async def slot(self, *, user: str, priority: Priority = "interactive") -> AsyncIterator["Ticket"]:
        """Waits for a slot and holds it for the block."""
        async with await self.enqueue(user=user, priority=priority) as ticket:
            await ticket.acquired()
            yield ticket

    async def _poll_ticket(self, ticket_id: str) -> int:
        args = [ticket_id, self.concurrency, self._lease_ms, self._wait_ms]
        return int(await self._poll(keys=self._keys, args=args))

    async def _release_ticket(self, ticket_id: str) -> None:
        await self._release(keys=self._keys, args=[ticket_id, self.concurrency, self._lease_ms])

    def _spawn(self, coroutine: Any) -> "asyncio.Task[Any]":
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


class Ticket:
    """A place in the queue, then a slot. An async context manager: leaving it frees either, also on
    an exception or a cancellation. A ticket dropped without release stops renewing its lease, so
    even then its slot is freed within a lease."""

    def __init__(
        self, admission: LlmAdmission, ticket_id: str, *, user: str, priority: Priority, position: int
    ) -> None:
        self.id = ticket_id
        self.user = user
        self.priority = priority
        self.position = position  # 0 once granted
        self.route: Route | None = None  # the pool's server this ticket queues for (core/llm/pool.py)
        self._admission = admission
        self._renewer: asyncio.Task[None] | None = None
        self._released = False

    @property
    def granted(self) -> bool:
        return self.position == 0

    async def __aenter__(self) -> "Ticket":
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.release()

    async def wait(self, *, tick_s: float = 5.0) -> AsyncIterator[int]:
        """Yields the 1-based queue position while waiting: when it changes, and at least every
        `tick_s` even if unchanged (a stream can send a keep-alive). Returns once granted."""
        reported, reported_at = -1, -math.inf
        while not self.granted:
            if self._released:
                raise RuntimeError("this ticket was released")
            now = time.monotonic()
            if self.position != reported or now - reported_at >= tick_s:
                reported, reported_at = self.position, now
                yield self.position
            await asyncio.sleep(min(self._admission.poll_s, tick_s))
            position = await self._admission._poll_ticket(self.id)
            if position < 0:  # our place lapsed (the loop stalled, or Redis lost its data): queue again
                log.warning("admission ticket %s lapsed while waiting; queueing again", self.id)
                fresh = await self._admission.enqueue(user=self.user, priority=self.priority)
                self.id, position = fresh.id, fresh.position
                fresh._released = True  # this ticket carries on with its id
                if fresh._renewer is not None:
                    fresh._renewer.cancel()
            self.position = position
        self._start_renewing()

    async def acquired(self) -> None:
        """Waits for the slot without reporting the position."""
        async for _ in self.wait(tick_s=math.inf):
            pass

    async def release(self) -> None:
        """Frees the slot or the waiting place; idempotent. Runs to completion even when the caller is
        cancelled (shielded); when Redis cannot be reached the lease lapses on its own."""
        if self._released:
            return
        self._released = True
        if self._renewer is not None:
            self._renewer.cancel()
        await asyncio.shield(self._admission._spawn(_release(self._admission, self.id)))

    def _start_renewing(self) -> None:
        if self._renewer is None and not self._released:
            interval = self._admission.lease_s / 3
            self._renewer = self._admission._spawn(
                _renew(self._admission, weakref.ref(self), self.id, interval)
            )


async def _release(admission: LlmAdmission, ticket_id: str) -> None:
    try:
        await admission._release_ticket(ticket_id)
    except (RedisError, OSError) as error:
        log.warning("could not release admission ticket %s (%s); its lease will lapse", ticket_id, error)


async def _renew(
    admission: LlmAdmission, ticket: "weakref.ref[Ticket]", ticket_id: str, interval: float
) -> None:
    """Renews the lease every `interval` while the ticket is alive; holds no strong reference to it."""
    while True:
        await asyncio.sleep(interval)
        if ticket() is None:  # dropped without release: let the lease lapse
            return
        try:
            position = await admission._poll_ticket(ticket_id)
        except (RedisError, OSError) as error:
            log.warning("could not renew admission lease %s: %s", ticket_id, error)
            continue
        if position != 0:  # the lease lapsed (a stalled loop, or Redis lost its data): nothing to renew
            log.warning("admission lease %s was lost while held", ticket_id)
            return


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

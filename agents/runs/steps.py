"""What a streamed agent run yields, step by step (agents/runs/service.py AgentRunner.stream), and the two
helpers a stream waits with: its turn at the model and keep-alives while nothing comes."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from core.llm.admission import Ticket

T = TypeVar("T")

# Seconds between keep-alive steps of a stream that waits (for a slot, or for the first token):
# below the 15 s at which some proxies give up on a silent connection, with room to spare.
KEEPALIVE_S = 10.0


@dataclass(frozen=True)
class Queued:
    position: int  # 1-based place in the model's queue; 0 once a stream that waited is admitted


@dataclass(frozen=True)
class KeepAlive:
    """Nothing new yet (waiting for a slot or a slow first token): a stream says it is alive."""


@dataclass(frozen=True)
class Token:
    text: str


@dataclass(frozen=True)
class Evidence:
    """The best passages, with their key sentences, sent before the model's first token."""

    passages: list[dict[str, Any]]


@dataclass(frozen=True)
class Reset:
    """The tokens so far are withdrawn (an answer withheld after it streamed)."""


@dataclass(frozen=True)
class Failed:
    error: Exception
    saving: bool = False  # the answer was complete, but storing it failed


@dataclass(frozen=True)
class Finished:
    result: dict[str, Any]  # the graph's final state


Step = Queued | KeepAlive | Token | Evidence | Reset | Failed | Finished


@dataclass
class QueuedTurn:
    """A stream's ticket, waited for by the graph's first node that calls the model (idempotent)."""

    ticket: Ticket

    async def wait(self, write: Callable[[dict[str, Any]], None]) -> None:
        waited = False
        async for position in self.ticket.wait(tick_s=KEEPALIVE_S):
            waited = True
            write({"queued": position})
        if waited:  # its turn came: position 0, so a client stops showing a place the model has left
            write({"queued": 0})


async def with_keepalive(source: AsyncIterator[T], interval: float = KEEPALIVE_S) -> AsyncIterator[T | None]:
    """The items of `source`, and None whenever none came for `interval` seconds (a slow model's
    first token), so a stream can send a keep-alive. The source runs in a task of its own; cancelling
    this iterator (a client that went away) cancels it, and with it the model call."""
    queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue(maxsize=1)

    async def pump() -> None:
        try:
            async for item in source:
                await queue.put((False, item))
        except Exception as error:  # handed to the consumer, raised there
            await queue.put((True, error))
            return
        await queue.put((True, None))

    task = asyncio.ensure_future(pump())
    try:
        while True:
            try:
                finished, item = await asyncio.wait_for(queue.get(), interval)
            except TimeoutError:
                yield None
                continue
            if finished:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

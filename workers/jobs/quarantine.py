"""Suspect jobs run alone, so a poison pill does not take other jobs down with it.

A job is suspect when its worker died under it before (its jobs row is still `running`, or has deaths
on record). If the same file kills the process again, every job running next to it dies too, and
would be charged a death it did not cause. So in one worker process a suspect job waits until nothing
else runs, and nothing new starts while it runs (a writer-preferring read/write lock: ordinary jobs
share, a suspect holds it alone). Waiting writes nothing to the jobs table, so a job that merely waited
is never counted as a death."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Quarantine:
    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._sharing = 0  # ordinary jobs running
        self._alone = False  # a suspect job running
        self._waiting_alone = 0  # suspects waiting: new ordinary jobs wait behind them

    @asynccontextmanager
    async def hold(self, *, alone: bool) -> AsyncIterator[None]:
        async with self._changed:
            if alone:
                self._waiting_alone += 1
                try:
                    await self._changed.wait_for(lambda: self._sharing == 0 and not self._alone)
                finally:
                    self._waiting_alone -= 1
                    self._changed.notify_all()  # ordinary jobs that queued behind it may go now
                self._alone = True
            else:
                await self._changed.wait_for(lambda: not self._alone and self._waiting_alone == 0)
                self._sharing += 1
        try:
            yield
        finally:
            async with self._changed:
                if alone:
                    self._alone = False
                else:
                    self._sharing -= 1
                self._changed.notify_all()

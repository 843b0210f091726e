"""The Runtime a worker's jobs get, for tests that run a job in-process, with stand-ins for some of
its parts (a scripted chat model, an unreachable embedding service, other settings)."""

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from core.runtime import Runtime, open_runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings


@asynccontextmanager
async def job_runtime(
    settings: Settings, urls: ServiceUrls, /, *, pool_size: int = 2, **replaced: Any
) -> AsyncIterator[Runtime]:
    async with open_runtime(settings, urls, pool_size=pool_size) as runtime:
        yield dataclasses.replace(runtime, **replaced)

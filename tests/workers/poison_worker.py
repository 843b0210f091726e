"""Test-only worker launcher (`python -m tests.workers.poison_worker`): the index worker, except that
parsing a file that contains POISON_MARKER kills the whole process at once (exit status 137, as when
the kernel kills it for memory), the way a file that crashes a native parser would. Nothing in the
product imports this module or reads anything it sets."""

import os
import sys
from typing import Any

import workers.jobs.index
from core.settings import Settings
from workers.main import run

POISON_MARKER = b"studyai-test-poison-pill"
_parse_bounded = workers.jobs.index.parse_bounded


async def parse_or_die(content: bytes, **kwargs: Any) -> Any:
    if POISON_MARKER in content:
        os._exit(137)  # no cleanup, no finally blocks: a hard death mid-job
    return await _parse_bounded(content, **kwargs)


if __name__ == "__main__":
    workers.jobs.index.parse_bounded = parse_or_die  # type: ignore[assignment]
    sys.exit(run(Settings(), "index"))

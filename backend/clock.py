"""The request's clock: `app.state.clock` when one is set (tests move time with it), else UTC now.
Study scheduling takes every time from here and passes it to the SQL as a parameter."""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request


def _utc_now() -> datetime:
    return datetime.now(UTC)


def get_clock(request: Request) -> Callable[[], datetime]:
    return getattr(request.app.state, "clock", None) or _utc_now


ClockDep = Annotated[Callable[[], datetime], Depends(get_clock)]

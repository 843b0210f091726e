"""The request's clock: the API resources' clock when one is set (tests move time with it), else UTC now.
Study scheduling takes every time from here and passes it to the SQL as a parameter."""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends

from backend.deps import ApiResourcesDep


def _utc_now() -> datetime:
    return datetime.now(UTC)


def get_clock(resources: ApiResourcesDep) -> Callable[[], datetime]:
    return resources.clock or _utc_now


ClockDep = Annotated[Callable[[], datetime], Depends(get_clock)]

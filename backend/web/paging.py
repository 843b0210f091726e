"""The `limit`/`offset` query parameters of the routes that list rows a page at a time, as one dependency.

No `from __future__ import annotations` here: FastAPI reads the closure's bounds from its signature."""

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Query

from core.store.sql.listing import Page as Page  # the routes' page, as the store takes it


def paging(*, default: int, most: int, offset_most: int | None = None) -> Callable[[int, int], Page]:
    """A dependency reading `limit` (1 to `most`, `default` when not given) and `offset` (from 0, to
    `offset_most` where set: an offset beyond bigint would reach Postgres)."""

    def page(
        limit: Annotated[int, Query(ge=1, le=most)] = default,
        offset: Annotated[int, Query(ge=0, le=offset_most)] = 0,
    ) -> Page:
        return Page(limit=limit, offset=offset)

    return page


# Most lists: 50 rows a page, at most 200.
PageDep = Annotated[Page, Depends(paging(default=50, most=200))]
# The security event lists (the project's and the caller's own).
EventPageDep = Annotated[Page, Depends(paging(default=50, most=200, offset_most=1_000_000))]

"""How the store's list functions take a page and a time window: one argument each, so the routes pass
what they parsed as it is and the signatures say which lists page and which filter by time."""

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict


class Page(TypedDict):
    """`limit` rows from `offset`, in the list's own order."""

    limit: int
    offset: int


@dataclass(frozen=True, slots=True)
class Period:
    """Rows created in [since, until); None leaves that side open."""

    since: datetime | None = None
    until: datetime | None = None


def page_or_all(page: Page | None) -> dict[str, int | None]:
    """The LIMIT and OFFSET parameters of `page`; None: every row (LIMIT NULL)."""
    if page is None:
        return {"limit": None, "offset": 0}
    return {"limit": page["limit"], "offset": page["offset"]}

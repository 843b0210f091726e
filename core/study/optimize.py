"""Per-student FSRS parameters fitted to their own review logs with fsrs's Optimizer (needs torch:
the `optimizer` extra).

MIN_REVIEWS = 512: fsrs's Optimizer fits on mini-batches of 512 reviews and returns its defaults when a
log has fewer cross-day reviews than that, so fitting on fewer is pointless. A student is fitted again
each time another MIN_REVIEWS reviews have been logged since the last fit."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from fsrs import Rating, ReviewLog
from fsrs.scheduler import DEFAULT_PARAMETERS

log = logging.getLogger(__name__)
MIN_REVIEWS = 512


@dataclass(frozen=True)
class LoggedReview:
    item: int  # any id, the same for every review of one card
    rating: int
    at: datetime
    duration_ms: int | None = None


def due_for_optimization(reviews: int, optimized_reviews: int | None) -> bool:
    return reviews >= MIN_REVIEWS and reviews - (optimized_reviews or 0) >= MIN_REVIEWS


def optimize(reviews: Sequence[LoggedReview]) -> list[float] | None:
    """Fitted parameters, or None when the optimizer is not installed or kept fsrs's defaults."""
    try:
        import torch  # noqa: F401  # fsrs.optimizer quietly swaps in a stub when torch is missing
        from fsrs.optimizer import Optimizer
    except ImportError:
        log.warning("fsrs's optimizer is not installed (pip install 'fsrs[optimizer]'): defaults kept")
        return None
    logs = [ReviewLog(r.item, Rating(r.rating), r.at, r.duration_ms) for r in reviews]
    parameters = [float(p) for p in Optimizer(logs).compute_optimal_parameters()]
    return None if parameters == [float(p) for p in DEFAULT_PARAMETERS] else parameters

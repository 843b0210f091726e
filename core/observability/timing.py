"""Elapsed time for timings and latencies, all on one clock: time.perf_counter (monotonic, and the
finest resolution the platform has)."""

import time


def mark() -> float:
    """A point to measure from; only differences between marks mean anything."""
    return time.perf_counter()


def elapsed_s(since: float) -> float:
    return time.perf_counter() - since


def elapsed_ms(since: float, digits: int | None = None) -> float:
    """Milliseconds since the mark `since`, rounded to `digits` decimals when given."""
    ms = (time.perf_counter() - since) * 1000
    return ms if digits is None else round(ms, digits)

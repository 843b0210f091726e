"""The soak's growth analysis (benchmarks/load/soak_metrics.py) on synthetic series: a flat series with noise,
or one that steps up once, passes; a steady climb past 10 % fails."""

import math
import random

import pytest

from benchmarks.load.load import Sample
from benchmarks.load.soak_metrics import (
    Minute,
    baseline_index,
    grows,
    growth_percent,
    growth_rows,
    label,
    postgres_private_mb,
    read_latencies,
    trend,
)


def _flat(n: int = 60, level: float = 500.0, noise: float = 0.03, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-noise, noise)) for _ in range(n)]


def test_growth_percent_from_start_to_end() -> None:
    assert growth_percent([100, 90, 120, 150], start=1) == pytest.approx((150 - 90) / 90 * 100)
    assert growth_percent([200, 180], start=0) == pytest.approx(-10)


def test_growth_percent_skips_gaps_and_handles_degenerate_series() -> None:
    assert growth_percent([math.nan, 100, math.nan, 110, math.nan]) == pytest.approx(10)
    assert math.isnan(growth_percent([100]))
    assert growth_percent([0, 0, 0]) == 0.0
    assert growth_percent([0, 5]) == math.inf


def test_flat_series_with_noise_passes() -> None:
    for seed in range(20):
        values = _flat(seed=seed)
        assert not grows(values, start=10), (seed, growth_percent(values, 10), trend(values, 10))


def test_steady_growth_past_the_limit_fails() -> None:
    rng = random.Random(7)
    # A leak of 0.5 % a minute with noise: about 25 % from minute 10 to 60.
    values = [500 * (1 + 0.005 * i) * (1 + rng.uniform(-0.01, 0.01)) for i in range(61)]
    assert growth_percent(values, 10) > 10
    assert trend(values, 10) > 0.9
    assert grows(values, start=10)


def test_slow_growth_under_the_limit_and_a_single_step_pass() -> None:
    creeping = [500 * (1 + 0.0015 * i) for i in range(61)]  # steady but under 10 % from minute 10
    assert trend(creeping, 10) == pytest.approx(1.0)
    assert not grows(creeping, start=10)
    # A cache filling once and then flat: up > 10 %, but not rising through the run.
    step = [400.0] * 12 + _flat(49, level=480.0, noise=0.01)
    assert growth_percent(step, 10) > 10
    assert not grows(step, start=10)


def test_constant_series_has_no_trend() -> None:
    assert trend([12.0] * 30) == 0.0
    assert not grows([12.0] * 30)


def test_baseline_is_minute_ten_or_a_third_of_a_short_run() -> None:
    assert baseline_index([60.0 * i for i in range(61)]) == 10
    assert baseline_index([20.0 * i for i in range(10)]) == 3  # a 3-minute smoke run


def test_growth_rows_judge_processes_and_connections_not_latency() -> None:
    minutes = [
        Minute(
            t_s=60.0 * i,
            rss_mb={"api (studyai up)": 300 + 3 * i, "redis": 10.0},
            fds={"api (studyai up)": 40, "redis": 12},
            pg_connections=8,
            search_p95_ms=40 + i,
        )
        for i in range(61)
    ]
    rows = {row["series"]: row for row in growth_rows(minutes)}
    assert rows["RSS MB api (studyai up)"]["verdict"] == "GROWS"
    assert rows["RSS MB api (studyai up)"]["from"] == 330
    assert rows["RSS MB redis"]["verdict"] == "ok"
    assert rows["fds total"]["verdict"] == "ok"
    assert rows["Postgres connections"]["verdict"] == "ok"
    assert rows["search p95 ms"]["verdict"] == "-"


def test_read_latencies_takes_the_window_of_finished_requests() -> None:
    samples = [
        Sample("search", 200, 0.05, started=1.0),
        Sample("search", 200, 0.50, started=2.0),
        Sample("search", 500, 0.01, started=3.0),
        Sample("qa_stream", 200, 30.0, started=5.0, first_s=20.0),
        Sample("qa_stream", 503, 0.01, started=6.0, deliberate=True),
        Sample("search", 200, 9.0, started=50.0),  # finishes after the window
    ]
    minute = Minute(t_s=60)
    read_latencies(samples, since=0.0, until=40.0, minute=minute)
    assert minute.requests == 5
    assert minute.errors == 1  # the 500; a deliberate 503 is not an error
    assert minute.search_p95_ms == pytest.approx(500)
    assert minute.qa_first_p95_s == 20.0 and minute.qa_total_p95_s == 30.0


def test_labels_are_stable_across_restarts() -> None:
    assert label(10, "python -m backend.cli.app up", api_pid=10) == "api (studyai up)"
    assert label(11, "/v/bin/python -m workers --queue index ", api_pid=10) == "worker index"
    server = "/v/bin/llama-server --model /m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf --port 5"
    assert label(12, server, api_pid=10) == "model server qwen2.5-coder-0.5b-instruct-q4_k_m"


def test_postgres_is_judged_by_its_private_memory_per_process_not_its_summed_rss() -> None:
    # Summed RSS climbs as backends read more shared buffers and the pool opens connections; the
    # private memory per process stays flat: no leak. A backend leaking its own memory is caught.
    def minutes(private_per_process: list[float]) -> list[Minute]:
        return [
            Minute(
                t_s=60.0 * i,
                rss_mb={"postgres": 150 + 3 * i},
                postgres_processes=8 + i // 20,
                postgres_private_mb=private_per_process[i] * (8 + i // 20),
            )
            for i in range(61)
        ]

    flat = {row["series"]: row for row in growth_rows(minutes(_flat(61, level=6.0, noise=0.02)))}
    assert flat["RSS MB postgres"]["percent"] > 10 and flat["RSS MB postgres"]["verdict"] == "-"
    assert flat["Postgres private MB per process"]["verdict"] == "ok"
    assert flat["Postgres private MB per process"]["goal"] == "memory"
    leaking = {row["series"]: row for row in growth_rows(minutes([6.0 * (1 + 0.01 * i) for i in range(61)]))}
    assert leaking["Postgres private MB per process"]["verdict"] == "GROWS"
    assert math.isnan(postgres_private_mb(Minute(t_s=0.0)))  # no Postgres process read in that sample

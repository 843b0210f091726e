"""The soak's sampling (processes, Postgres, Redis, latencies of a window) and its analysis (growth of a
series after the warm-up, a monotonic-growth verdict), apart from the run so the analysis can be tested."""

import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import psycopg
import redis.asyncio as redis
from scipy.stats import spearmanr

from benchmarks.load.load import Sample
from benchmarks.load.soak_fds import UnixPeers, fd_kinds, listening_ports
from benchmarks.stack import Stack, percentile
from core.jobs.specs import AGENT_QUEUE

# A series "grows" when it ends more than this much above its value after the warm-up AND rises steadily:
# one spike or a step up at a cache's first fill is not a leak, a slow steady climb past 10 % is.
GROWTH_LIMIT_PCT = 10.0
MONOTONIC_RHO = 0.8
WARM_UP_MIN = 10.0
POSTGRES_PRIVATE = "Postgres private MB per process"


@dataclass
class Minute:
    """One sample: at `t_s` seconds into the run, for the window since the previous sample."""

    t_s: float
    rss_mb: dict[str, float] = field(default_factory=dict)  # per process label
    fds: dict[str, int] = field(default_factory=dict)
    fd_kinds: dict[str, dict[str, int]] = field(default_factory=dict)  # per process but Postgres: soak_fds
    postgres_processes: int = 0
    postgres_private_mb: float = float("nan")  # summed over its processes: see private_outside_shared
    pg_connections: int = 0
    redis_mb: float = float("nan")
    agents_queued: int = 0  # jobs waiting on the agents queue (sampled judgements wait behind students)
    db_mb: float = float("nan")
    uploaded_bytes: int = 0
    requests: int = 0
    errors: int = 0
    search_p95_ms: float = float("nan")
    qa_first_p95_s: float = float("nan")
    qa_total_p95_s: float = float("nan")


def label(pid: int, command: str, api_pid: int) -> str:
    """A stable name for a process across restarts (the supervisor gives a restarted child a new pid)."""
    if pid == api_pid:
        return "api (studyai up)"
    if queue := re.search(r"-m workers --queue (\S+)", command):
        return f"worker {queue.group(1)}"
    if "llama-server" in command:
        model = re.search(r"--model (\S+)", command)
        return f"model server {Path(model.group(1)).stem if model else ''}".strip()
    return Path(command.split(" ", 1)[0]).name or str(pid)


def _processes(stack: Stack) -> dict[str, list[psutil.Process]]:
    """Every process of the stack by label; Postgres's postmaster and its backends as one group."""
    groups: dict[str, list[psutil.Process]] = {}
    found = [(stack.process.pid, "studyai up"), *stack.children()]
    services = stack.service_pids()
    try:
        postmaster = psutil.Process(services["postgres"]) if "postgres" in services else None
        groups["postgres"] = [postmaster, *postmaster.children()] if postmaster else []
    except psutil.NoSuchProcess:
        pass  # restarting: this sample has no Postgres line, which the report shows as a gap
    for pid, command in found + ([(services["redis"], "redis")] if "redis" in services else []):
        try:
            process = psutil.Process(pid)
        except psutil.NoSuchProcess:
            continue  # exited since it was listed (a child being restarted)
        name = "redis" if command == "redis" else label(pid, command, stack.process.pid)
        groups.setdefault(name, []).append(process)
    return {name: processes for name, processes in groups.items() if processes}


# Postgres's shared memory (buffers, locks) is a shared mapping of /dev/zero, plus dynamic segments in
# /dev/shm; a page of it that only one backend has touched still counts as that backend's "private".
SHARED_MAPPINGS = ("/dev/zero", "/SYSV", "/dev/shm/")


def private_outside_shared(process: psutil.Process) -> int:
    """Bytes of the process's own memory (heap, stacks, caches) that no other process maps, outside the
    shared memory: what a leaking Postgres backend grows, whatever the buffer cache does."""
    return sum(
        m.private_clean + m.private_dirty
        for m in process.memory_maps(grouped=True)
        if not m.path.startswith(SHARED_MAPPINGS)
    )


def read_processes(stack: Stack, minute: Minute) -> None:
    """RSS (MB, summed over a group) and open descriptors of each process, and Postgres's private memory;
    a process that exits while being read (a Postgres backend closing) is left out of this sample."""
    groups = _processes(stack)
    ports, unix = listening_ports(groups), UnixPeers.snapshot()
    for name, processes in groups.items():
        rss = fds = alive = private = 0
        for process in processes:
            try:
                with process.oneshot():
                    rss += process.memory_info().rss
                    fds += process.num_fds()
                    private += private_outside_shared(process) if name == "postgres" else 0
                    if name != "postgres":
                        kinds = Counter(minute.fd_kinds.get(name, {})) + fd_kinds(process, ports, unix)
                        minute.fd_kinds[name] = dict(kinds)
                alive += 1
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        if alive:
            minute.rss_mb[name] = rss / 2**20
            minute.fds[name] = fds
            if name == "postgres":
                minute.postgres_processes = alive
                minute.postgres_private_mb = private / 2**20


async def read_services(stack: Stack, minute: Minute) -> None:
    """Postgres client connections (the sampler's own left out), the database's size, Redis used_memory."""
    async with await psycopg.AsyncConnection.connect(stack.database_url(), autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
            " AND pid <> pg_backend_pid()), pg_database_size(current_database())"
        )
        row = await cursor.fetchone()
        assert row is not None
        minute.pg_connections, minute.db_mb = int(row[0]), row[1] / 2**20
    client = redis.from_url(stack.redis_url())
    try:
        minute.redis_mb = (await client.info("memory"))["used_memory"] / 2**20
        minute.agents_queued = await client.zcard(AGENT_QUEUE)
    finally:
        await client.aclose()


def read_latencies(samples: Sequence[Sample], since: float, until: float, minute: Minute) -> None:
    """p95 of the requests that finished in the window (monotonic clock): search in ms, streamed questions'
    first answer event and total in s. A window with few streamed questions has a p95 near its maximum."""
    window = [s for s in samples if since <= s.started + s.seconds < until]
    minute.requests = len(window)
    minute.errors = sum(not (200 <= s.status < 300 or s.deliberate) for s in window)
    search = [s.seconds * 1000 for s in window if s.route == "search" and 200 <= s.status < 300]
    qa = [s for s in window if s.route == "qa_stream" and s.status == 200]
    minute.search_p95_ms = percentile(search, 95)
    minute.qa_first_p95_s = percentile([s.first_s for s in qa if s.first_s is not None], 95)
    minute.qa_total_p95_s = percentile([s.seconds for s in qa], 95)


def series(minutes: Sequence[Minute]) -> dict[str, list[float]]:
    """Every sampled figure as one series over the minutes (NaN where a process was not there)."""
    names = sorted({name for m in minutes for name in m.rss_mb})
    out: dict[str, list[float]] = {}
    for name in names:
        out[f"RSS MB {name}"] = [m.rss_mb.get(name, math.nan) for m in minutes]
    out[POSTGRES_PRIVATE] = [postgres_private_mb(m) for m in minutes]
    for name in names:
        out[f"fds {name}"] = [float(m.fds.get(name, math.nan)) for m in minutes]
    out["fds total"] = [float(sum(m.fds.values())) for m in minutes]
    out["Postgres connections"] = [float(m.pg_connections) for m in minutes]
    out["Redis used_memory MB"] = [m.redis_mb for m in minutes]
    out["database MB"] = [m.db_mb for m in minutes]
    out["agents queue jobs"] = [float(m.agents_queued) for m in minutes]
    out["search p95 ms"] = [m.search_p95_ms for m in minutes]
    out["QA first event p95 s"] = [m.qa_first_p95_s for m in minutes]
    out["QA total p95 s"] = [m.qa_total_p95_s for m in minutes]
    return out


def postgres_private_mb(minute: Minute) -> float:
    """Postgres's private memory outside its shared memory, per process (postmaster and backends): what
    a leaking backend grows. Its summed RSS also counts every shared-buffer page once per backend that
    read it, so it climbs as the database grows and as the pool opens connections, with no leak."""
    if minute.postgres_processes == 0:
        return math.nan
    return minute.postgres_private_mb / minute.postgres_processes


def goal_of(name: str) -> str | None:
    """Which goal a series is judged by: memory, descriptors or connections; None for figures only
    (latencies, the database that grows with the uploads, and Postgres's summed RSS: see above)."""
    if name == "RSS MB postgres":
        return None
    if name.startswith("RSS") or name == POSTGRES_PRIVATE:
        return "memory"
    if name.startswith("fds"):
        return "descriptors"
    return "connections" if name == "Postgres connections" else None


def baseline_index(times_s: Sequence[float]) -> int:
    """The first sample at minute 10 or later; a run too short for that (the smoke run) starts its
    comparison a third of the way in, so the verdicts still have points on either side."""
    after = [i for i, t in enumerate(times_s) if t >= WARM_UP_MIN * 60]
    if after and len(times_s) - after[0] >= 3:
        return after[0]
    return len(times_s) // 3


def growth_percent(values: Sequence[float], start: int = 0) -> float:
    """Percent from the first known value at or after `start` to the last known one."""
    known = [v for v in values[start:] if not math.isnan(v)]
    if len(known) < 2 or known[0] == 0:
        return math.nan if len(known) < 2 else (0.0 if known[-1] == 0 else math.inf)
    return (known[-1] - known[0]) / abs(known[0]) * 100


def trend(values: Sequence[float], start: int = 0) -> float:
    """Spearman's rank correlation of the series with time from `start` on: near 1 climbs steadily, near 0
    wanders. A constant series has no trend (0, where spearmanr would give NaN)."""
    known = [v for v in values[start:] if not math.isnan(v)]
    if len(known) < 3 or len(set(known)) == 1:
        return 0.0
    rho = spearmanr(range(len(known)), known).statistic
    return 0.0 if math.isnan(rho) else float(rho)


def grows(values: Sequence[float], start: int = 0) -> bool:
    """The goal's failure: more than GROWTH_LIMIT_PCT up from `start` to the end, rising steadily."""
    percent = growth_percent(values, start)
    return not math.isnan(percent) and percent > GROWTH_LIMIT_PCT and trend(values, start) >= MONOTONIC_RHO


def growth_rows(minutes: Sequence[Minute]) -> list[dict[str, Any]]:
    """Per series: the value at the baseline and at the end, percent, Spearman rho, the verdict; latencies
    and the database get figures but no verdict (the database grows with the uploads by design)."""
    start = baseline_index([m.t_s for m in minutes])
    rows = []
    for name, values in series(minutes).items():
        known = [v for v in values[start:] if not math.isnan(v)]
        goal = goal_of(name)
        rows.append(
            {
                "series": name,
                "goal": goal,
                "from": known[0] if known else math.nan,
                "to": known[-1] if known else math.nan,
                "percent": growth_percent(values, start),
                "rho": trend(values, start),
                "verdict": ("GROWS" if grows(values, start) else "ok") if goal else "-",
            }
        )
    return rows


def machine() -> str:
    """CPU model and count, memory: the report's header."""
    model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = psutil.virtual_memory().total / 2**30
    return f"{model}, {os.cpu_count()} cores, {memory:.0f} GiB"


def number(value: float, digits: int = 0) -> str:
    return "–" if math.isnan(value) else f"{value:,.{digits}f}"


SERVICE_COLUMNS = [
    "min", "PG conns", "Redis MB", "agents queued", "DB MB", "uploaded KB", "requests", "errors",
    "search p95 ms", "QA first p95 s", "QA total p95 s",
]  # fmt: skip


def service_row(m: Minute) -> list[str]:
    """A row of the report's services and latency table, in SERVICE_COLUMNS' order."""
    return [
        f"{m.t_s / 60:.1f}", str(m.pg_connections), number(m.redis_mb, 2), str(m.agents_queued),
        number(m.db_mb, 1),
        number(m.uploaded_bytes / 1024, 1), str(m.requests), str(m.errors), number(m.search_p95_ms),
        number(m.qa_first_p95_s, 1), number(m.qa_total_p95_s, 1),
    ]  # fmt: skip


def plot(minutes: list[Minute], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [m.t_s / 60 for m in minutes]
    names = sorted({name for m in minutes for name in m.rss_mb})
    fig, axes = plt.subplots(2, 3, figsize=(15, 8), sharex=True)
    for name in names:
        axes[0][0].plot(t, [m.rss_mb.get(name, math.nan) for m in minutes], label=name)
        axes[0][1].plot(t, [m.fds.get(name, math.nan) for m in minutes], label=name)
    axes[0][0].plot(t, [postgres_private_mb(m) for m in minutes], "k--", label="postgres private / process")
    axes[0][0].set(title="RSS per process, MB", yscale="log")
    axes[0][1].set(title="open descriptors per process", yscale="log")
    axes[0][0].legend(fontsize=7)
    axes[0][2].plot(t, [m.pg_connections for m in minutes])
    axes[0][2].set(title="Postgres client connections")
    axes[1][0].plot(t, [m.redis_mb for m in minutes])
    axes[1][0].set(title="Redis used_memory, MB")
    axes[1][1].plot(t, [m.db_mb for m in minutes], label="database MB")
    axes[1][1].plot(t, [m.uploaded_bytes / 1024 for m in minutes], label="uploaded KB")
    axes[1][1].set(title="database size and uploads")
    axes[1][1].legend(fontsize=7)
    axes[1][2].plot(t, [m.search_p95_ms / 1000 for m in minutes], "o-", label="search")
    axes[1][2].plot(t, [m.qa_first_p95_s for m in minutes], "o-", label="QA first event")
    axes[1][2].plot(t, [m.qa_total_p95_s for m in minutes], "o-", label="QA total")
    axes[1][2].set(title="p95 per window, s (log)", yscale="log")
    axes[1][2].legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("minutes into the run")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)

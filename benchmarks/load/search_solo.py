"""`POST /search` timed alone against `studyai up`, the figure a change to the API's wiring must keep.

The stack runs without a chat model (search needs none). The load benchmark's three chapters are
indexed once per work dir and reused; each of its searches is then sent `--repeat` times, one at a
time, after one untimed warm-up pass. Prints the p50 and p95 in ms as one JSON line, so that runs of
two checkouts can be interleaved by a shell loop and compared.

    python benchmarks/load/search_solo.py --workdir /tmp/search-solo [--repeat 3]
"""

import argparse
import asyncio
import json
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.load.load import CHAPTERS, SEARCHES
from benchmarks.stack import RUST, Stack, percentile, studyai_up, upload, wait_jobs
from core.observability import timing

PROJECT_NAME = "search-solo"
# An address nothing listens on: `studyai up` starts no model server, and search never asks one.
NO_MODEL = "http://127.0.0.1:9/v1"


async def course_project(http: httpx.AsyncClient, headers: dict[str, str]) -> str:
    """The indexed project of an earlier run in this work dir, or a new one indexed now."""
    listed = (await http.get("/projects", headers=headers)).json()
    for project in listed.get("items", listed) if isinstance(listed, dict) else listed:
        if project["name"] == PROJECT_NAME:
            return await indexed(http, headers, str(project["id"]))
    created = await http.post("/projects", json={"name": PROJECT_NAME, "language": "en"}, headers=headers)
    project_id = str(created.json()["id"])
    jobs = [(await upload(http, headers, project_id, RUST / name))["job_id"] for name in CHAPTERS]
    finished = await wait_jobs(http, headers, project_id, jobs)
    if not all(job["status"] == "succeeded" for job in finished.values()):
        raise RuntimeError(f"indexing failed: {finished}")
    return project_id


async def indexed(http: httpx.AsyncClient, headers: dict[str, str], project_id: str) -> str:
    """The earlier run's project, if every chapter is ready: one whose indexing failed would time
    searches over nothing."""
    documents = (await http.get(f"/projects/{project_id}/documents", headers=headers)).json()
    ready = sorted(document["filename"] for document in documents if document["status"] == "ready")
    if ready != sorted(CHAPTERS):
        raise RuntimeError(f"{PROJECT_NAME} here is not fully indexed ({ready}); use a new --workdir")
    return project_id


async def workers_settled(http: httpx.AsyncClient, wait_s: float = 180) -> None:
    """Until both workers report in: a worker still loading its embedding model takes the CPU the
    searches are timed on."""
    for _ in range(int(wait_s)):
        components = (await http.get("/health/ready")).json().get("components", {})
        if all(components.get(name, {}).get("status") == "ok" for name in ("worker_index", "worker_agents")):
            return
        await asyncio.sleep(1)
    raise RuntimeError("the workers did not report in")


async def time_searches(stack: Stack, headers: dict[str, str], repeat: int) -> list[float]:
    async with httpx.AsyncClient(base_url=stack.base, timeout=120) as http:
        await workers_settled(http)
        project = await course_project(http, headers)
        url = f"/projects/{project}/search"
        for query in SEARCHES:  # warm-up: first-use costs (plans, caches) are not what is measured
            (await http.post(url, json={"query": query}, headers=headers)).raise_for_status()
        timings = []
        for query in SEARCHES * repeat:
            started = timing.mark()
            (await http.post(url, json={"query": query}, headers=headers)).raise_for_status()
            timings.append(timing.elapsed_s(started))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with studyai_up(
        args.workdir, model="qwen2.5-coder-1.5b-instruct", extra_env={"LLM_BASE_URL": NO_MODEL}
    ) as stack:
        key_file = args.workdir / "search-solo.key"
        if not key_file.exists():
            key_file.write_text(stack.cli("users", "create", "solo@bench"))
        headers = {"Authorization": f"Bearer {key_file.read_text().strip()}"}
        timings = asyncio.run(time_searches(stack, headers, args.repeat))
    print(
        json.dumps(
            {
                "searches": len(timings),
                "p50_ms": round(percentile(timings, 50) * 1000, 2),
                "p95_ms": round(percentile(timings, 95) * 1000, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

"""`studyai up` as a user runs it: embedded services, API and worker; a second start keeps the data."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.fake_model import free_port
from tests.conftest import REPO_ROOT, studyai
from tests.processes import alive, wait_for_health


def start_up(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["STUDYAI_DATA_DIR"] = str(data_dir)
    env["LLM_LOCAL_MODEL"] = "qwen2.5-coder-0.5b-instruct"  # the faster sibling: this test is about the stack
    env["LLM_MODELS_DIR"] = str(REPO_ROOT / ".cache" / "models")
    # As hosting platforms set them: neither may reach the embedded model server (it would bind there).
    env["PORT"], env["HOST"] = str(free_port()), "0.0.0.0"
    log = open(data_dir.parent / f"up-{port}.log", "wb")  # noqa: SIM115  # lives as long as the process
    return subprocess.Popen(
        [sys.executable, "-m", "backend.cli.app", "up", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=log,
    )


def wait_healthy(base: str, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    outcome = wait_for_health(base, process, timeout=timeout, poll_s=0.5)
    assert outcome != "exited", "studyai up exited early"
    assert outcome == "healthy", "studyai up did not become healthy"


def wait_ready(base: str, timeout: float = 180) -> dict[str, Any]:
    """/health/ready once the supervised children, the workers' heartbeats and the model are all ok."""
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(f"{base}/health/ready", timeout=10)
        components = response.json()["components"]
        if response.status_code == 200 and all(c["status"] == "ok" for c in components.values()):
            return components
        assert time.monotonic() < deadline, components
        time.sleep(0.5)


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=60)


def test_up_serves_indexes_and_keeps_data_across_restarts(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start_up(data_dir, port)
    try:
        wait_healthy(base, process)
        created = studyai("users", "create", "up@example.org", data_dir=data_dir)
        assert created.returncode == 0, created.stderr
        headers = {"Authorization": f"Bearer {created.stdout.strip().splitlines()[-1]}"}
        project = httpx.post(f"{base}/projects", json={"name": "kept"}, headers=headers).json()["id"]
        files = {"file": ("notes.md", b"# Notes\n\nThe embedded stack indexes this.\n")}
        accepted = httpx.post(f"{base}/projects/{project}/documents", files=files, headers=headers).json()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            job = httpx.get(f"{base}/projects/{project}/jobs/{accepted['job_id']}", headers=headers).json()
            if job["status"] in ("succeeded", "failed"):
                break
            time.sleep(0.5)
        assert job["status"] == "succeeded", job
        components = wait_ready(base)
        children = {name: c["detail"] for name, c in components.items() if name.startswith("process:")}
        assert set(children) == {"process:llm-server", "process:worker-index", "process:worker-agents"}
        pids = [int(detail.split("pid ")[1].split(",")[0]) for detail in children.values()]
    finally:
        assert stop(process) == 0
    assert not any(alive(pid) for pid in pids)  # SIGTERM stopped every child: no orphans

    process = start_up(data_dir, port)
    try:
        wait_healthy(base, process)
        listed = httpx.get(f"{base}/projects", headers=headers).json()
        assert [p["id"] for p in listed] == [project]
        hits = httpx.post(
            f"{base}/projects/{project}/search", json={"query": "embedded stack"}, headers=headers
        )
        assert hits.json()["results"][0]["document_id"] == accepted["document_id"]
    finally:
        assert stop(process) == 0

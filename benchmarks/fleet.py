"""A deployment scaled out on this machine, as the scale-out test (tests/test_scale_out.py) and the
scale-out load benchmark (benchmarks/load/scale_out.py) run it: API processes (`studyai up --no-worker`)
and worker processes (`python -m workers --queue ...`), each with a data folder of its own, on one
Postgres and one Redis, calling a pool of model servers (LLM_BASE_URLS). No containers: the processes a
Kubernetes deployment would run, started as plain processes."""

import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from benchmarks.fake_model import free_port
from benchmarks.stack import REPO_ROOT


def fleet_environment(
    database_url: str, redis_url: str, model_urls: str, extra: dict[str, str]
) -> dict[str, str]:
    """This machine's environment without its own studyAI settings, and the fleet's shared ones."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("LLM_", "PORT", "STUDYAI_"))}
    return (
        env
        | {
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "LLM_BASE_URLS": model_urls,
            "LLM_STRUCTURED_OUTPUT": "json_schema",
            "LLM_MODEL": "fleet-model",
        }
        | extra
    )


@dataclass
class Member:
    """One process of the fleet."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    port: int | None = None  # an API's

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """kill -9: no clean stop, no lease released, no row marked."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        if not self.alive():
            return self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]


@dataclass
class Fleet:
    root: Path
    env: dict[str, str]
    apis: list[Member] = field(default_factory=list)
    workers: list[Member] = field(default_factory=list)

    def start_api(self, name: str) -> Member:
        port = free_port()
        member = self._start(
            name, [sys.executable, "-m", "backend.cli.app", "up", "--no-worker", "--port", str(port)]
        )
        member.port = port
        self.apis.append(member)
        return member

    def start_worker(self, name: str, queue: str) -> Member:
        member = self._start(name, [sys.executable, "-m", "workers", "--queue", queue])
        self.workers.append(member)
        return member

    def _start(self, name: str, command: list[str]) -> Member:
        data = self.root / name
        data.mkdir(parents=True, exist_ok=True)  # each process's own data folder, as on its own machine
        log = self.root / f"{name}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                command, env=self.env | {"STUDYAI_DATA_DIR": str(data)}, stdout=out, stderr=subprocess.STDOUT,
                cwd=REPO_ROOT,
            )  # fmt: skip
        return Member(name, process, log)

    async def wait_ready(self, timeout: float = 240) -> None:
        """Every API answers /health and every worker process has beaten (its row in worker_processes)."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=5) as http:
            for api in self.apis:
                while True:
                    assert api.alive(), f"{api.name} exited: {api.tail()}"
                    assert time.monotonic() < deadline, f"{api.name} did not start: {api.tail()}"
                    try:
                        if (await http.get(f"{api.url}/health")).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    await asyncio.sleep(0.5)
            pids = {w.process.pid for w in self.workers}
            while True:
                ready = (await http.get(f"{self.apis[0].url}/health/ready")).json()
                running = {w["pid"] for w in ready["workers"] if w["status"] == "running"}
                if pids <= running:
                    return
                dead = [w for w in self.workers if not w.alive()]
                assert not dead, f"{dead[0].name} exited: {dead[0].tail()}"
                assert time.monotonic() < deadline, f"workers not beating: {pids - running}"
                await asyncio.sleep(0.5)

    def stop(self) -> dict[str, int]:
        return {member.name: member.stop() for member in [*self.apis, *self.workers]}


def client_of(member: Member, **kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=member.url, timeout=kwargs.pop("timeout", 120), **kwargs)

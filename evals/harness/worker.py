"""The worker process run beside a stack by an eval, a benchmark or a test: `python -m workers` told
where the stack is, with its output in a log file of the data directory."""

import os
import subprocess
import sys
import time
from pathlib import Path

from core.runtime.services import ServiceUrls

REPO_ROOT = Path(__file__).resolve().parents[2]


def start_worker(
    urls: ServiceUrls,
    data_dir: Path,
    *args: str,
    module: str = "workers",
    log_name: str | None = None,
    **env: str,
) -> subprocess.Popen[bytes]:
    """`python -m workers` (all queues) by default; `args` such as ("--queue", "index"), or a test's own
    launcher `module`; `env` adds variables. The log is `log_name` in `data_dir` (appended to), else a
    new file per process."""
    environment = {
        **os.environ,
        "DATABASE_URL": urls.database_url,
        "REDIS_URL": urls.redis_url,
        "STUDYAI_DATA_DIR": str(data_dir),
        **env,
    }
    log_path = data_dir / (log_name or f"worker-{time.time_ns()}.log")
    log = open(log_path, "ab")  # noqa: SIM115  # closed with the process
    return subprocess.Popen(
        [sys.executable, "-m", module, *args], env=environment, stdout=log, stderr=log, cwd=REPO_ROOT
    )


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()

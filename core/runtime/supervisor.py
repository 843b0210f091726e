"""Keeps the processes `studyai up` starts alive: each death is logged with its exit code or signal,
the child is restarted with exponential backoff, and a crash loop is logged at CRITICAL and shown in
its state (read by GET /health/ready), not hidden behind endless quiet restarts.

One thread per child waits on it, so a slow restart (a model loading) never delays the others. Children
run in their own session: a Ctrl-C in the terminal reaches `studyai up` only, which stops them itself,
so nothing restarts a child that is meant to be stopping."""

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal

log = logging.getLogger(__name__)

ChildStatus = Literal["starting", "running", "restarting", "crash_loop", "stopped"]
# Called with the just-started process; returns once it serves, raises ChildStartError if it will not.
ReadyCheck = Callable[["subprocess.Popen[bytes]"], None]
# Whether a running child still answers (each call bounded by its own timeout): a process can be alive and
# hung (stopped, deadlocked), which waiting on its exit never notices.
LivenessCheck = Callable[[], bool]


class ChildStartError(RuntimeError):
    """A child did not come up; the message says why (exit code, its log's last lines, or the wait)."""


@dataclass(frozen=True)
class ChildSpec:
    name: str
    command: Sequence[str]
    env: Mapping[str, str]
    log_path: Path | None = None  # None: the child writes to this process's stdout/stderr
    ready: ReadyCheck | None = None
    liveness: "LivenessProbe | None" = None


@dataclass(frozen=True)
class LivenessProbe:
    """A running child is probed every `interval_s`; `failures` unanswered probes in a row (each bounded
    by the check's own timeout) mean it hangs: it is killed (SIGKILL: a stopped process ignores SIGTERM)
    and restarted like a child that died. The probe asks the server whether it answers at all, not whether
    a generation finished, so a long healthy generation is never cut."""

    check: LivenessCheck
    interval_s: float = 10.0
    failures: int = 3


@dataclass(frozen=True)
class ChildState:
    name: str
    status: ChildStatus
    pid: int | None
    restarts: int
    last_exit: str | None  # e.g. "exit code 1", "killed by SIGKILL"
    recent_deaths: int  # within the crash-loop window


@dataclass(frozen=True)
class RestartPolicy:
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    crash_loop_deaths: int = 5  # this many deaths ...
    crash_loop_window_s: float = 60.0  # ... within this window is a crash loop
    # A child that ran this long held up: its backoff starts over and a crash loop is over.
    stable_after_s: float = 60.0
    stop_timeout_s: float = 30.0  # SIGTERM, then SIGKILL after this long


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def log_tail(path: Path | None, offset: int = 0, lines: int = 20) -> str:
    """The last lines a child wrote to its log since `offset`, for an error message."""
    if path is None or not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(offset)
        text = handle.read()[-16_384:].decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class _Child:
    spec: ChildSpec
    process: "subprocess.Popen[bytes] | None" = None
    status: ChildStatus = "starting"
    restarts: int = 0
    last_exit: str | None = None
    deaths: deque[float] = field(default_factory=deque)  # within the crash-loop window
    consecutive_deaths: int = 0  # since the child last held up; sets the backoff
    crash_loop: bool = False
    started_at: float = 0.0
    thread: threading.Thread | None = None


class Supervisor:
    """Start children with `start`; leaving the context (or `stop`) stops them all, SIGTERM then SIGKILL."""

    def __init__(self, policy: RestartPolicy | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self._children: dict[str, _Child] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def __enter__(self) -> "Supervisor":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, spec: ChildSpec) -> None:
        """Starts the child and waits for its ready check here, so a child that never comes up stops the
        caller with ChildStartError; from then on a thread restarts it whenever it dies."""
        if spec.name in self._children:
            raise ValueError(f"a child named {spec.name!r} is already supervised")
        child = _Child(spec)
        with self._lock:
            self._children[spec.name] = child
        try:
            self._launch(child)
        except BaseException as error:
            with self._lock:
                child.status = "stopped"
                child.last_exit = "did not come up: " + (str(error).splitlines() or [type(error).__name__])[0]
            raise
        child.thread = threading.Thread(target=self._watch, args=(child,), name=f"supervise-{spec.name}")
        child.thread.daemon = True
        child.thread.start()

    def states(self) -> dict[str, ChildState]:
        now = time.monotonic()
        with self._lock:
            return {
                name: ChildState(
                    name=name,
                    status=self._status(child, now),
                    pid=child.process.pid
                    if child.process is not None and child.status == "running"
                    else None,
                    restarts=child.restarts,
                    last_exit=child.last_exit,
                    recent_deaths=sum(1 for t in child.deaths if now - t <= self.policy.crash_loop_window_s),
                )
                for name, child in self._children.items()
            }

    def _status(self, child: _Child, now: float) -> ChildStatus:
        """A crash loop stays reported, through the restarts, until the child holds up again."""
        held_up = child.status == "running" and now - child.started_at >= self.policy.stable_after_s
        if child.crash_loop and child.status != "stopped" and not held_up:
            return "crash_loop"
        return child.status

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            children = list(self._children.values())
        for child in children:  # all get SIGTERM first, so they shut down in parallel
            _signal_group(child.process, signal.SIGTERM)
        deadline = time.monotonic() + self.policy.stop_timeout_s
        for child in children:
            process = child.process
            if process is None:
                continue
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning(
                    "%s did not stop within %s s; killing it", child.spec.name, self.policy.stop_timeout_s
                )
                _signal_group(process, signal.SIGKILL)
                process.wait()
            with self._lock:
                child.status = "stopped"
        for child in children:
            if child.thread is not None:
                child.thread.join(timeout=5)

    def _launch(self, child: _Child) -> None:
        spec = child.spec
        log_offset = 0
        with self._lock:
            if self._stopping.is_set():
                return
            if spec.log_path is None:
                child.process = subprocess.Popen(
                    list(spec.command), env=dict(spec.env), start_new_session=True
                )
            else:
                spec.log_path.parent.mkdir(parents=True, exist_ok=True)
                with spec.log_path.open("ab") as log_file:
                    log_offset = log_file.tell()
                    child.process = subprocess.Popen(
                        list(spec.command),
                        env=dict(spec.env),
                        stdout=log_file,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
        child.started_at = time.monotonic()
        log.info("%s started (pid %s)", spec.name, child.process.pid)
        if spec.ready is not None:
            try:
                spec.ready(child.process)
            except BaseException as error:
                _signal_group(child.process, signal.SIGKILL)
                child.process.wait()
                tail = log_tail(spec.log_path, log_offset)
                if isinstance(error, ChildStartError) and tail:
                    raise ChildStartError(f"{error}; the last lines of {spec.log_path}:\n{tail}") from None
                raise
        with self._lock:
            child.status = "running"

    def _watch(self, child: _Child) -> None:
        assert child.process is not None
        how = self._wait_exit(child)
        while not self._stopping.is_set():
            self._record_death(child, how)
            if self._stopping.wait(self._backoff(child)):
                return
            with self._lock:
                child.restarts += 1
            try:
                self._launch(child)
            except ChildStartError as error:  # one more death; the next try waits longer
                log.error("%s did not come back: %s", child.spec.name, error)
                how = "did not come back: " + str(error).splitlines()[0][:200]
                continue
            if self._stopping.is_set():
                return
            how = self._wait_exit(child)

    def _wait_exit(self, child: _Child) -> str:
        """Waits for the child to exit and says how; with a liveness probe, a child that stops answering is
        killed here and reported as hung."""
        process, probe = child.process, child.spec.liveness
        assert process is not None
        if probe is None:
            return describe_exit(process.wait())
        unanswered = 0
        while True:
            try:
                return describe_exit(process.wait(timeout=probe.interval_s))
            except subprocess.TimeoutExpired:
                pass
            if self._stopping.is_set():
                return describe_exit(process.wait())
            unanswered = 0 if _answers(probe) else unanswered + 1
            if unanswered >= probe.failures:
                waited = probe.failures * probe.interval_s
                log.error(
                    "%s stopped answering (%d probes, ~%.0f s): killing it",
                    child.spec.name,
                    unanswered,
                    waited,
                )
                with self._lock:
                    child.status = "restarting"  # requests see it at once, before the kill completes
                _signal_group(process, signal.SIGKILL)
                process.wait()
                return f"hung: no answer to {unanswered} liveness probes"

    def _record_death(self, child: _Child, how: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - child.started_at >= self.policy.stable_after_s:
                child.consecutive_deaths, child.crash_loop = 0, False
            child.consecutive_deaths += 1
            child.last_exit = how
            child.deaths.append(now)
            while child.deaths and now - child.deaths[0] > self.policy.crash_loop_window_s:
                child.deaths.popleft()
            child.status = "restarting"
            deaths = len(child.deaths)
            child.crash_loop = child.crash_loop or deaths >= self.policy.crash_loop_deaths
            crash_loop, in_a_row = child.crash_loop, child.consecutive_deaths
        delay = self._backoff(child)
        if crash_loop:
            log.critical(
                "%s is in a crash loop: %d deaths in a row (%d within %s s), the last %s; next try in %.1f s",
                child.spec.name, in_a_row, deaths, self.policy.crash_loop_window_s, how, delay,
            )  # fmt: skip
        else:
            log.warning("%s died (%s); restarting in %.1f s", child.spec.name, how, delay)

    def _backoff(self, child: _Child) -> float:
        """Doubles with each death since the child last held up (ran stable_after_s)."""
        with self._lock:
            deaths = max(1, child.consecutive_deaths)
        return float(min(self.policy.backoff_initial_s * 2 ** (deaths - 1), self.policy.backoff_max_s))


def _answers(probe: LivenessProbe) -> bool:
    try:
        return probe.check()
    except Exception:  # a probe that raises is a probe unanswered
        return False


def _signal_group(process: "subprocess.Popen[bytes] | None", signum: int) -> None:
    """Signals the child's whole process group (it leads its own session), so no grandchild is left."""
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)

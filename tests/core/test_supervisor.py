"""What `studyai up` starts is supervised: restarted when it dies, a crash loop reported, the model
server started with only the environment it needs, never cutting a completion short, and failing
with a reason when it does not come up."""

import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from benchmarks.fake_model import free_port
from core.llm.local import LOCAL_MODELS, LlamaServer, assemble
from core.runtime.child_env import child_environment, settings_env_names
from core.runtime.supervisor import ChildSpec, ChildStartError, LivenessProbe, RestartPolicy, Supervisor
from tests.conftest import REPO_ROOT
from tests.processes import alive

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
FAST = RestartPolicy(backoff_initial_s=0.05, backoff_max_s=0.2, crash_loop_deaths=3, stop_timeout_s=10)


def wait_until(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"condition not met within {timeout} s")


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(entry.split("=", 1) for entry in raw.decode().split("\0") if "=" in entry)


def test_child_environment_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "PORT": "9999", "HOST": "0.0.0.0", "API_KEY": "platform-secret", "AWS_SECRET_ACCESS_KEY": "x",
        "STUDYAI_DATA_DIR": "/data", "EMBEDDING_MODEL": "m", "OMP_NUM_THREADS": "2", "LC_ALL": "C.UTF-8",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    worker = child_environment({"DATABASE_URL": "postgresql://db/x"})
    assert {"PORT", "HOST", "API_KEY", "AWS_SECRET_ACCESS_KEY"}.isdisjoint(worker)
    assert worker["STUDYAI_DATA_DIR"] == "/data" and worker["EMBEDDING_MODEL"] == "m"
    assert worker["OMP_NUM_THREADS"] == "2" and worker["LC_ALL"] == "C.UTF-8"
    assert worker["DATABASE_URL"] == "postgresql://db/x" and worker["PATH"] == os.environ["PATH"]
    model_server = LlamaServer.environment()  # needs no studyAI setting at all
    assert "STUDYAI_DATA_DIR" not in model_server and "PORT" not in model_server
    assert {"PORT", "HOST"}.isdisjoint(settings_env_names())


def test_a_killed_child_is_restarted_and_stop_leaves_no_process(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="core.runtime.supervisor")
    with Supervisor(FAST) as supervisor:
        supervisor.start(ChildSpec("sleeper", SLEEPER, child_environment()))
        first = supervisor.states()["sleeper"]
        assert first.status == "running" and first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        wait_until(lambda: supervisor.states()["sleeper"].pid not in (None, first.pid))
        second = supervisor.states()["sleeper"]
        assert second.status == "running" and second.restarts == 1
        assert second.last_exit == "killed by SIGKILL"
        assert any("sleeper died (killed by SIGKILL)" in r.getMessage() for r in caplog.records)
    assert supervisor.states()["sleeper"].status == "stopped"
    assert not alive(second.pid)  # type: ignore[arg-type]


def test_a_crash_loop_is_reported_loudly_until_the_child_holds_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="core.runtime.supervisor")
    # Exits with 3 on its first four starts, then runs.
    flaky = [
        sys.executable, "-c",
        "import pathlib, sys, time; p = pathlib.Path(sys.argv[1]);"
        " n = int(p.read_text()) if p.exists() else 0;"
        " p.write_text(str(n + 1)); sys.exit(3) if n < 4 else time.sleep(60)",
        str(tmp_path / "starts"),
    ]  # fmt: skip
    with Supervisor(replace(FAST, stable_after_s=1.0)) as supervisor:
        supervisor.start(ChildSpec("crasher", flaky, child_environment()))
        wait_until(lambda: supervisor.states()["crasher"].status == "crash_loop")
        state = supervisor.states()["crasher"]
        assert state.last_exit == "exit code 3" and state.recent_deaths >= 3
        wait_until(lambda: supervisor.states()["crasher"].status == "running")  # held up for 1 s
        assert supervisor.states()["crasher"].restarts == 4
    critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert critical and "crasher is in a crash loop" in critical[0].getMessage()


def server_for(model_path: Path, tmp_path: Path, start_timeout_s: float) -> LlamaServer:
    return LlamaServer(
        model_path,
        context_tokens=1024,
        threads=None,
        log_path=tmp_path / "llm.log",
        start_timeout_s=start_timeout_s,
    )


def test_a_model_server_that_exits_stops_start_up_with_its_reason(tmp_path: Path) -> None:
    server = server_for(tmp_path / "missing.gguf", tmp_path, start_timeout_s=120)
    started = time.monotonic()
    with Supervisor(FAST) as supervisor, pytest.raises(ChildStartError) as failure:
        supervisor.start(server.child_spec())
    message = str(failure.value)
    assert f"exited (exit code 1) before it answered on port {server.port}" in message
    assert "the last lines of" in message and "missing.gguf" in message  # from the server's own log
    assert time.monotonic() - started < 120
    assert supervisor.states()["llm-server"].status == "stopped"


def test_a_model_server_that_never_answers_fails_within_the_bound(tmp_path: Path) -> None:
    server = server_for(tmp_path / "unused.gguf", tmp_path, start_timeout_s=2)
    silent = ChildSpec(
        "llm-server", SLEEPER, child_environment(), tmp_path / "llm.log", ready=server.wait_ready
    )
    started = time.monotonic()
    with Supervisor(FAST) as supervisor, pytest.raises(ChildStartError, match="did not answer on port"):
        supervisor.start(silent)
    assert time.monotonic() - started < 15
    assert f"on port {server.port} within 2 s" in str(supervisor.states()["llm-server"].last_exit)


PROBE_INTERVAL_S, PROBE_FAILURES = 1.0, 3  # a hang is found within ~3 s (production: 10 s x 3)


def test_a_child_that_stops_answering_is_killed_and_restarted(caplog: pytest.LogCaptureFixture) -> None:
    answering = {"now": True}
    probe = LivenessProbe(lambda: answering["now"], interval_s=0.1, failures=3)
    with Supervisor(FAST) as supervisor:
        supervisor.start(ChildSpec("hangs", SLEEPER, env=child_environment(), liveness=probe))
        first = supervisor.states()["hangs"].pid
        time.sleep(0.5)  # answering: left alone
        assert supervisor.states()["hangs"].pid == first and supervisor.states()["hangs"].restarts == 0
        answering["now"] = False
        wait_until(lambda: supervisor.states()["hangs"].restarts >= 1)
        answering["now"] = True
        wait_until(lambda: supervisor.states()["hangs"].status == "running")
        state = supervisor.states()["hangs"]
        assert state.pid not in (None, first) and not alive(first)
        assert state.last_exit == "hung: no answer to 3 liveness probes"
    assert "stopped answering" in caplog.text


# The real embedded model server (the 0.5B model), started once for the tests below, with PORT and HOST
# set the way a hosting platform sets them, and llama.cpp's own variables for another port and a key.
@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Supervisor, LlamaServer, int]]:
    path = assemble(LOCAL_MODELS["qwen2.5-coder-0.5b-instruct"], REPO_ROOT / ".cache" / "models")
    log_path = tmp_path_factory.mktemp("llm") / "llm-server.log"
    server = LlamaServer(
        path,
        context_tokens=2048,
        threads=None,
        log_path=log_path,
        start_timeout_s=180,
        probe_interval_s=PROBE_INTERVAL_S,
        probe_failures=PROBE_FAILURES,
    )
    decoy = free_port()
    with pytest.MonkeyPatch.context() as patch, Supervisor(FAST) as supervisor:
        patch.setenv("PORT", str(decoy))
        patch.setenv("HOST", "0.0.0.0")
        patch.setenv("LLAMA_ARG_PORT", str(decoy))
        patch.setenv("LLAMA_API_KEY", "platform-secret")
        supervisor.start(server.child_spec())
        yield supervisor, server, decoy


def test_port_in_the_environment_does_not_reach_the_model_server(
    model_server: tuple[Supervisor, LlamaServer, int],
) -> None:
    supervisor, server, decoy = model_server
    pid = supervisor.states()["llm-server"].pid
    assert pid is not None
    environ = environ_of(pid)
    assert {"PORT", "HOST", "LLAMA_ARG_PORT", "LLAMA_API_KEY"}.isdisjoint(environ)
    assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200  # no key asked
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{decoy}/v1/models", timeout=5)


async def stream_completion(base_url: str, prompt: str) -> str:
    body = {
        "messages": [{"role": "user", "content": prompt}],
        "temperature": 0,
        "max_tokens": 40,
        "stream": True,
        # Each prompt from scratch: a prefill that starts from a cached prefix splits the batch
        # differently, and the 0.5B model's greedy choice can flip on such rounding.
        "cache_prompt": False,
    }
    text = []
    async with (
        httpx.AsyncClient(timeout=120) as http,
        http.stream("POST", f"{base_url}/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[len("data: ") :])["choices"]:
                    text.append(choice["delta"].get("content") or "")
    return "".join(text)


async def test_a_second_streaming_request_waits_instead_of_cutting_the_first(
    model_server: tuple[Supervisor, LlamaServer, int],
) -> None:
    _, server, _ = model_server
    # Prompts that start differently: each reuses the same cached prefix (the chat template) alone or not.
    prompts = ["Count from one to twenty in words.", "Name ten colours, one per line."]
    await stream_completion(server.base_url, "Say hello.")  # warm-up
    alone = [await stream_completion(server.base_url, prompt) for prompt in prompts]
    together = await asyncio.gather(*(stream_completion(server.base_url, prompt) for prompt in prompts))
    assert all(len(text) > 40 for text in alone), alone
    assert list(together) == alone


def signal_model_server(supervisor: Supervisor, signum: signal.Signals) -> int:
    """Sends the supervised model server the signal; its pid."""
    pid = supervisor.states()["llm-server"].pid
    assert pid is not None
    os.kill(pid, signum)
    return pid


def test_a_killed_model_server_comes_back_on_the_same_port(
    model_server: tuple[Supervisor, LlamaServer, int],
) -> None:
    supervisor, server, _ = model_server
    first = signal_model_server(supervisor, signal.SIGKILL)
    wait_until(lambda: supervisor.states()["llm-server"].pid not in (None, first), timeout=180)
    assert supervisor.states()["llm-server"].last_exit == "killed by SIGKILL"
    assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200


async def test_a_long_healthy_generation_is_never_taken_for_a_hang(
    model_server: tuple[Supervisor, LlamaServer, int],
) -> None:
    """llama.cpp answers GET /health while its one slot generates: a generation many probe windows long
    runs to its end on the same process."""
    supervisor, server, _ = model_server
    before = supervisor.states()["llm-server"]
    body = {
        "messages": [{"role": "user", "content": "Count from 1 to 2000, separated by commas."}],
        "max_tokens": 900,
        "ignore_eos": True,  # llama.cpp: generate all of max_tokens, so the run is long on any machine
        "temperature": 0,
    }
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=600) as http:
        response = await http.post(f"{server.base_url}/chat/completions", json=body)
    took = time.monotonic() - started
    assert response.status_code == 200
    assert response.json()["usage"]["completion_tokens"] == 900
    assert took > 3 * PROBE_INTERVAL_S * PROBE_FAILURES, took  # several hang windows long
    after = supervisor.states()["llm-server"]
    assert after.pid == before.pid and after.restarts == before.restarts


def test_a_stopped_model_server_is_killed_and_restarted(
    model_server: tuple[Supervisor, LlamaServer, int],
) -> None:
    """SIGSTOP: the process is alive, so waiting on its exit would never notice; the probe does."""
    supervisor, server, _ = model_server
    first = signal_model_server(supervisor, signal.SIGSTOP)
    stopped_at = time.monotonic()
    wait_until(lambda: supervisor.states()["llm-server"].status != "running", timeout=60)
    found_after = time.monotonic() - stopped_at
    assert (
        found_after < PROBE_INTERVAL_S * (PROBE_FAILURES + 1) + 5 * PROBE_FAILURES
    )  # probes time out at 5 s
    wait_until(lambda: supervisor.states()["llm-server"].status == "running", timeout=180)
    state = supervisor.states()["llm-server"]
    assert state.pid != first and not alive(first)
    assert state.last_exit is not None and state.last_exit.startswith("hung")
    assert httpx.get(f"{server.base_url}/models", timeout=5).status_code == 200

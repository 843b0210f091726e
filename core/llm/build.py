"""`python -m core.llm.build`: compiles llama.cpp's own OpenAI-compatible server, `llama-server`, into
this environment's bin/ (part of `make install` and of the model image).

The source is the llama.cpp tree vendored in a pinned llama-cpp-python sdist from PyPI, checked against
its sha256. Why not llama-cpp-python's own server: to serve log-probabilities (the QA's option scoring,
the judge's contrast check) it computes the logits of every prompt token, which made prefill 1.67×
slower on this machine (benchmarks/reports/llm_server.md); llama-server computes them for the sampled
position only, and keeps the shared prompt prefix in its slot between requests."""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

SDIST = "llama-cpp-python==0.3.36"
SDIST_FILE = "llama_cpp_python-0.3.36.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
SERVER_NAME = "llama-server"

# Static, so the binary runs alone; no curl (it never downloads a model); only the server target.
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)


def installed_server() -> Path:
    """Where the build puts the server: next to this environment's python."""
    return Path(sys.prefix) / "bin" / SERVER_NAME


def build_stamp() -> str:
    """What the installed binary was built from: a change of source or flags rebuilds it."""
    flags = " ".join((os.environ.get("CFLAGS", ""), os.environ.get("CXXFLAGS", ""), *CMAKE_OPTIONS))
    return f"{SDIST_SHA256} {flags}\n"


def _stamp_path(target: Path) -> Path:
    return target.with_name(f"{target.name}.build")


def is_current(target: Path) -> bool:
    stamp = _stamp_path(target)
    return target.exists() and stamp.exists() and stamp.read_text() == build_stamp()


def file_sha256(path: Path) -> str:
    """Read in blocks: the files checked here are sdists and model weights of a gigabyte."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 * 1024 * 1024):
            digest.update(block)
    return digest.hexdigest()


def fetch_source(workdir: Path) -> Path:
    """The pinned sdist through pip (its index and proxy settings), checked, unpacked; the llama.cpp root."""
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*pip, SDIST, "-d", str(workdir)], check=True)
    archive = workdir / SDIST_FILE
    if (actual := file_sha256(archive)) != SDIST_SHA256:
        raise SystemExit(f"{archive.name}: sha256 {actual} is not the pinned {SDIST_SHA256}")
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return workdir / SDIST_FILE.removesuffix(".tar.gz") / "vendor" / "llama.cpp"


def compile_server(source: Path, build_dir: Path, jobs: int) -> Path:
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SystemExit("building llama-server needs cmake (apt-get install cmake, or pip install cmake)")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run([cmake, "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_OPTIONS], check=True)
    subprocess.run([cmake, "--build", str(build_dir), "--target", SERVER_NAME, "-j", str(jobs)], check=True)
    return build_dir / "bin" / SERVER_NAME


def build(target: Path, *, jobs: int, force: bool = False) -> Path:
    if not force and is_current(target):
        print(f"{target} is current", file=sys.stderr)
        return target
    with tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
        workdir = Path(tmp)
        binary = compile_server(fetch_source(workdir), workdir / "build", jobs)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        shutil.copy2(binary, partial)
        partial.replace(target)  # a running server keeps its old inode
    _stamp_path(target).write_text(build_stamp())
    print(f"built {target}", file=sys.stderr)
    return target


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m core.llm.build", description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, default=installed_server(), help="where to put the binary")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compile jobs")
    parser.add_argument("--force", action="store_true", help="rebuild even if the binary is current")
    args = parser.parse_args(argv)
    build(args.target, jobs=args.jobs, force=args.force)


if __name__ == "__main__":
    main()

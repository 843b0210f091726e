"""The embedded model's weights are checked against their pinned sha256 before a server may load them."""

import hashlib
from pathlib import Path

import pytest

from core.llm.local import LocalModel, ModelIntegrityError, assemble


def model_pinned_to(content: bytes) -> LocalModel:
    return LocalModel("tiny", "no_such_package_part", 1, len(content), hashlib.sha256(content).hexdigest())


def test_assembled_weights_that_match_their_pin_are_used(tmp_path: Path) -> None:
    content = b"GGUF" + bytes(range(256)) * 64
    model = model_pinned_to(content)
    target = tmp_path / "tiny-q4_k_m.gguf"
    target.write_bytes(content)
    assert assemble(model, tmp_path) == target


def test_weights_that_differ_from_their_pin_are_refused_and_removed(tmp_path: Path) -> None:
    model = model_pinned_to(b"the pinned weights")
    target = tmp_path / "tiny-q4_k_m.gguf"
    target.write_bytes(b"some other weights")
    with pytest.raises(ModelIntegrityError, match="is not the pinned"):
        assemble(model, tmp_path)
    assert not target.exists()

"""The llama-server build: what `make install` compiled is found, and a change of flags rebuilds it."""

from pathlib import Path

import pytest

from core.llm import build as llama_build
from core.llm.local import server_binary, server_command


def test_a_binary_is_current_only_for_the_source_and_flags_it_was_built_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "bin" / "llama-server"
    target.parent.mkdir()
    target.write_bytes(b"\x7fELF")
    assert not llama_build.is_current(target)  # no record of how it was built
    monkeypatch.setenv("CFLAGS", "-mno-amx-tile")
    llama_build._stamp_path(target).write_text(llama_build.build_stamp())
    assert llama_build.is_current(target)
    monkeypatch.setenv("CFLAGS", "")
    assert not llama_build.is_current(target)  # built without AMX guards: build again


def test_the_embedded_server_is_the_one_make_install_built() -> None:
    binary = server_binary()
    assert binary == llama_build.installed_server() and binary.exists()
    stamp = llama_build._stamp_path(binary).read_text()
    assert stamp.startswith(llama_build.SDIST_SHA256)  # built from the pinned source
    command = server_command(Path("m.gguf"), host="127.0.0.1", port=1, context_tokens=2048, threads=2)
    assert command[0] == str(binary)
    assert command[command.index("--parallel") + 1] == "1"
    assert command[command.index("--threads-batch") + 1] == "2"


def test_a_server_with_more_slots_gives_each_slot_the_context_asked_for() -> None:
    command = server_command(
        Path("m.gguf"), host="127.0.0.1", port=1, context_tokens=2048, threads=2, parallel=4
    )
    assert command[command.index("--parallel") + 1] == "4"
    assert command[command.index("--ctx-size") + 1] == "8192"
    assert "--model-draft" not in command
    drafted = server_command(
        Path("m.gguf"), host="127.0.0.1", port=1, context_tokens=2048, threads=2, draft_path=Path("d.gguf")
    )
    assert drafted[drafted.index("--model-draft") + 1] == "d.gguf"
    assert drafted[drafted.index("--spec-type") + 1] == "draft-simple"  # llama.cpp's default is none

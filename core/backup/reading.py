"""Reads a backup back: the manifest first, then every member copied out and checked against the
manifest's sha256 before anything touches the database."""

import hashlib
import json
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from core.backup.archive import DATA_DIR_FOLDERS, DUMP, FILES, FORMAT_VERSION, MANIFEST
from core.backup.errors import BackupError


@dataclass(frozen=True)
class OpenedBackup:
    manifest: dict[str, Any]
    dump: Path  # database.dump, checked
    files: dict[str, Path]  # the data directory's files by their relative path, checked


@contextmanager
def open_backup(path: Path, work_parent: Path) -> Iterator[OpenedBackup]:
    """The backup's members copied into a temporary folder under `work_parent`, each checked; raises
    BackupError for a damaged, altered or foreign file."""
    if not path.is_file():
        raise BackupError(f"{path}: no such backup file")
    work_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work_parent, prefix=".studyai-restore-") as work:
        try:
            with tarfile.open(path, mode="r:") as tar:
                opened = _unpack(tar, Path(work), path)
        except (tarfile.TarError, EOFError) as error:
            raise BackupError(f"{path} is not a readable studyAI backup (damaged?): {error}") from None
        yield opened


def _unpack(tar: tarfile.TarFile, work: Path, path: Path) -> OpenedBackup:
    first = tar.next()
    if first is None or first.name != MANIFEST or not first.isfile():
        raise BackupError(f"{path} is not a studyAI backup (it does not start with {MANIFEST})")
    manifest = _read_manifest(_member(tar, first), path)
    expected: dict[str, dict[str, Any]] = manifest["members"]
    unpacked: dict[str, Path] = {}
    while (member := tar.next()) is not None:
        name = member.name
        if name not in expected or not member.isfile() or not _safe(name) or name in unpacked:
            raise BackupError(f"{path}: unexpected member {name!r}: not a backup this code wrote")
        target = work / "members" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = _copy(_member(tar, member), target)
        if digest != expected[name]["sha256"]:
            raise BackupError(
                f"{path}: checksum mismatch for {name} (sha256 {digest[:12]}…, the manifest says"
                f" {expected[name]['sha256'][:12]}…): the backup is damaged; nothing was restored"
            )
        unpacked[name] = target
    missing = sorted(set(expected) - set(unpacked))
    if missing:
        raise BackupError(f"{path}: members missing ({', '.join(missing)}): the backup is incomplete")
    files = {name.removeprefix(FILES): target for name, target in unpacked.items() if name.startswith(FILES)}
    return OpenedBackup(manifest, unpacked[DUMP], files)


def _read_manifest(source: IO[bytes], path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(source.read())
    except (ValueError, UnicodeDecodeError) as error:
        raise BackupError(f"{path}: its manifest is damaged ({error})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("members"), dict):
        raise BackupError(f"{path}: its manifest is not a studyAI backup manifest")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BackupError(
            f"{path}: backup format {version} is newer than this studyAI reads ({FORMAT_VERSION}):"
            " restore it with the studyAI release that wrote it"
        )
    if DUMP not in manifest["members"]:
        raise BackupError(f"{path}: its manifest lists no {DUMP}")
    return manifest


def _member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    source = tar.extractfile(member)
    if source is None:
        raise BackupError(f"{member.name}: not a file")
    return source


def _safe(name: str) -> bool:
    """A member name that stays inside the folder it is unpacked into, and whose file goes back only
    to a folder a backup keeps (never pgdata or models, whatever a crafted file says)."""
    parts = PurePosixPath(name).parts
    if PurePosixPath(name).is_absolute() or ".." in parts:
        return False
    return name == DUMP or (name.startswith(FILES) and len(parts) > 2 and parts[1] in DATA_DIR_FOLDERS)


def _copy(source: IO[bytes], target: Path) -> str:
    sha = hashlib.sha256()
    with target.open("wb") as out:
        while block := source.read(1 << 20):
            sha.update(block)
            out.write(block)
    return sha.hexdigest()

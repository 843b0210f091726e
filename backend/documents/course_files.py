"""The files of a course uploaded at once: a folder's files and the members of a course ZIP, each with
its path, read within the limits before anything is stored.

A course ZIP is hostile input like any other: its member count is checked from the central directory,
every member is inflated with its real size counted (a bomb may declare any size), one member past
MAX_UPLOAD_BYTES or the whole past COURSE_ZIP_MAX_INFLATED_BYTES stops there; member names are only ever
titles (nothing is written to disk by name), cleaned of `..`, absolute roots and hidden parts anyway."""

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import BinaryIO

from core.settings.limits import LimitSettings
from core.text.filetypes import zip_type
from core.text.zips import ZIP_ERRORS, MemberRefused, inflate

_SKIPPED_PARTS = ("__MACOSX",)


@dataclass(frozen=True)
class CourseFile:
    path: str  # relative, "/"-separated: the document's title (without its extension)
    content: bytes


@dataclass(frozen=True)
class Refused:
    path: str
    reason: str


def clean_path(name: str) -> str | None:
    """A member or folder path as a relative path; None for directories and hidden or system files."""
    parts = [
        part for part in PurePosixPath(name.replace("\\", "/")).parts if part not in ("", ".", "..", "/")
    ]
    if not parts or any(part.startswith(".") or part in _SKIPPED_PARTS for part in parts):
        return None
    return "/".join(parts)


def is_course_zip(head: bytes, stream: BinaryIO) -> bool:
    """A ZIP that is not itself an Office document or an e-book."""
    if not head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return False
    try:
        with zipfile.ZipFile(stream) as archive:
            names = set(archive.namelist()[:50_000])
        if "[Content_Types].xml" in names or "META-INF/container.xml" in names:
            return False
    except (zipfile.BadZipFile, ValueError, OSError):
        return False
    finally:
        stream.seek(0)
    return True


def zip_members(stream: BinaryIO, zip_path: str, limits: LimitSettings) -> Iterator[CourseFile | Refused]:
    """Each member of a course ZIP as a file or a refusal with its reason."""
    try:
        archive = zipfile.ZipFile(stream)
        members = [member for member in archive.infolist() if not member.is_dir()]
    except ZIP_ERRORS as error:
        yield Refused(zip_path, f"the ZIP is damaged and cannot be opened ({error})")
        return
    if len(members) > limits.course_upload_max_files:
        most = limits.course_upload_max_files
        yield Refused(
            zip_path, f"the ZIP holds {len(members):,} files, more than the {most:,} allowed at once"
        )
        return
    inflated = 0
    with archive:
        for member in members:
            path = clean_path(member.filename)
            if path is None:
                continue
            if inflated >= limits.course_zip_max_inflated_bytes:
                yield Refused(path, _inflated_reason(limits))
                continue
            outcome = _read_member(
                archive, member, path, limits, limits.course_zip_max_inflated_bytes - inflated
            )
            if isinstance(outcome, CourseFile):
                inflated += len(outcome.content)
            yield outcome


def _read_member(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: str, limits: LimitSettings, budget: int
) -> CourseFile | Refused:
    if member.file_size > limits.max_upload_bytes and not member.flag_bits & 0x1:
        return Refused(path, f"the file is larger than the limit of {limits.max_upload_bytes // 1024**2} MB")
    try:
        content = inflate(archive, member, budget=min(limits.max_upload_bytes, budget))
    except MemberRefused as refused:
        if refused.kind == "encrypted":
            return Refused(path, "the file is encrypted in the ZIP (password-protected)")
        if refused.kind == "unreadable":
            return Refused(path, f"the file cannot be read from the ZIP ({refused.detail})")
        if budget < limits.max_upload_bytes:
            return Refused(path, _inflated_reason(limits))
        return Refused(path, f"the file inflates past the limit of {limits.max_upload_bytes // 1024**2} MB")
    if content.startswith(b"PK\x03\x04"):
        try:
            zip_type(content)
        except ValueError:
            return Refused(path, "a ZIP inside the course ZIP is not opened; upload it on its own")
    return CourseFile(path, content)


def _inflated_reason(limits: LimitSettings) -> str:
    size = limits.course_zip_max_inflated_bytes // 1024**2
    return f"the ZIP inflates to more than {size:,} MB; split the course into smaller ZIPs"

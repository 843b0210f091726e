"""A ZIP upload's members read as the hostile input they may be, for both readers that open ZIPs: a
course ZIP's files (backend/documents/course_files.py) and the parts of an Office file or an e-book
(workers/parsing/archive.py). The bytes that really come out while inflating are counted (a bomb may
declare any size) against a budget, and optionally against the size the member declares and a
compression ratio; an encrypted member is refused before it is read. Each caller words the refusal."""

import zipfile
from typing import Literal

READ_SIZE = 1024 * 1024
# What zipfile and zlib raise for a damaged or unsupported archive or member.
ZIP_ERRORS = (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError)

Refusal = Literal["encrypted", "too_big", "unreadable"]


class MemberRefused(Exception):
    """Why a member was not read: encrypted, too big (past the budget, its declared size or the ratio),
    or unreadable (`detail` says what zipfile said)."""

    def __init__(self, kind: Refusal, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


def inflate(
    archive: zipfile.ZipFile,
    member: zipfile.ZipInfo,
    *,
    budget: int,
    max_ratio: int | None = None,
    declared_only: bool = False,
) -> bytes:
    """The member's bytes, read a megabyte at a time: MemberRefused("too_big") as soon as more than
    `budget` bytes come out, more than the member declared (with `declared_only`; zipfile stops there
    and a liar fails its CRC, this stops it first), or more than `max_ratio` times its compressed size
    past a first megabyte."""
    if member.flag_bits & 0x1:
        raise MemberRefused("encrypted")
    parts: list[bytes] = []
    size = 0
    try:
        with archive.open(member) as source:
            while block := source.read(READ_SIZE):
                size += len(block)
                if size > budget or (declared_only and size > max(member.file_size, 0) + READ_SIZE):
                    raise MemberRefused("too_big")
                if (
                    max_ratio is not None
                    and size > READ_SIZE
                    and size > max_ratio * max(member.compress_size, 1)
                ):
                    raise MemberRefused("too_big")
                parts.append(block)
    except MemberRefused:
        raise
    except ZIP_ERRORS as error:
        raise MemberRefused("unreadable", str(error)) from error
    return b"".join(parts)

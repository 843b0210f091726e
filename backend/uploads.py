"""Reading an upload within the size limit and deciding its type: the checks before anything is stored."""

import hashlib
from dataclasses import dataclass
from pathlib import PurePath

from fastapi import HTTPException, Request
from starlette.datastructures import UploadFile

from core.filetypes import UnsupportedFileType, detect_source_type

_READ_SIZE = 1024 * 1024
_MULTIPART_OVERHEAD = 64 * 1024


@dataclass(frozen=True)
class CheckedUpload:
    content: bytes
    filename: str
    source_type: str
    content_hash: str

    @property
    def default_title(self) -> str:
        return PurePath(self.filename).stem or self.filename


def too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"The file is larger than the limit of {limit // (1024 * 1024)} MB.")


def reject_oversized_request(request: Request, limit: int) -> None:
    """Refuse before reading the body when the client already says it is too big."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + _MULTIPART_OVERHEAD:
        raise too_large(limit)


async def read_upload(file: UploadFile, limit: int) -> CheckedUpload:
    parts: list[bytes] = []
    size = 0
    while block := await file.read(_READ_SIZE):
        size += len(block)
        if size > limit:
            raise too_large(limit)
        parts.append(block)
    filename = PurePath(file.filename or "upload").name
    return check_content(b"".join(parts), filename)


def check_content(content: bytes, filename: str) -> CheckedUpload:
    if not content:
        raise HTTPException(422, "The file is empty; there is nothing to index.")
    try:
        detected = detect_source_type(content, filename)
    except UnsupportedFileType as error:
        raise HTTPException(415, str(error)) from error
    return CheckedUpload(
        content=content,
        filename=filename,
        source_type=detected.source_type,
        content_hash=hashlib.sha256(content).hexdigest(),
    )

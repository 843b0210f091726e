"""Reading an upload within the size limit and deciding its type: the checks before anything is stored."""

import hashlib
from dataclasses import dataclass
from pathlib import PurePath

from starlette.datastructures import UploadFile

from backend.middleware.body_limit import upload_too_large_detail
from core.errors import TooLarge, Unprocessable, UnsupportedType
from core.messages import Text
from core.text.filetypes import UnsupportedFileType, detect_source_type

_READ_SIZE = 1024 * 1024
# Stored with the document and shown in listings; a longer name keeps its start and its extension.
FILENAME_MAX_CHARS = 255
_SUFFIX_MAX_CHARS = 16


@dataclass(frozen=True)
class CheckedUpload:
    content: bytes
    filename: str
    source_type: str
    content_hash: str

    @property
    def default_title(self) -> str:
        return PurePath(self.filename).stem or self.filename


def too_large(limit: int) -> TooLarge:
    # The whole request body was already held to the limit (middleware/body_limit.py); this is the file's.
    return TooLarge(upload_too_large_detail(limit))


def bounded_filename(name: str) -> str:
    if len(name) <= FILENAME_MAX_CHARS:
        return name
    suffix = PurePath(name).suffix
    suffix = suffix if len(suffix) <= _SUFFIX_MAX_CHARS else ""
    return name[: FILENAME_MAX_CHARS - len(suffix)] + suffix


async def read_upload(file: UploadFile, limit: int) -> CheckedUpload:
    parts: list[bytes] = []
    size = 0
    while block := await file.read(_READ_SIZE):
        size += len(block)
        if size > limit:
            raise too_large(limit)
        parts.append(block)
    filename = bounded_filename(PurePath(file.filename or "upload").name or "upload")
    return check_content(b"".join(parts), filename)


def check_content(content: bytes, filename: str) -> CheckedUpload:
    if not content:
        raise Unprocessable(Text("upload.empty"))
    try:
        detected = detect_source_type(content, filename)
    except UnsupportedFileType as error:
        raise UnsupportedType(Text("upload.unsupported_type", detail=str(error))) from error
    return CheckedUpload(
        content=content,
        filename=filename,
        source_type=detected.source_type,
        content_hash=hashlib.sha256(content).hexdigest(),
    )

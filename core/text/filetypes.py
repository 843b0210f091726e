"""Decides an upload's type from its bytes, not its name, or refuses it with what is accepted.

A ZIP's members decide between DOCX, PPTX, XLSX and EPUB (the central directory is read, nothing is
inflated); an OLE compound file is an encrypted Office document or an old binary one, each refused with
what to do. HTML is told apart from Markdown holding inline HTML by `looks_like_html` (its rule below)."""

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

SourceType = Literal["pdf", "markdown", "text", "html", "docx", "pptx", "xlsx", "epub", "image"]
# Parsed in the bounded child process (workers/parsing/bounded.py): the formats whose parsers inflate,
# decode images or walk markup trees of a hostile file.
CHILD_PARSED: frozenset[str] = frozenset({"pdf", "html", "docx", "pptx", "xlsx", "epub", "image"})
# Shown wherever the accepted types are listed (refusals, README, the web app's upload control).
ACCEPTED_TYPES = (
    "PDF (scanned pages too), PowerPoint (.pptx), Word (.docx), Excel (.xlsx), EPUB, "
    "web pages (.html), Markdown, plain text and page images (PNG, JPEG, TIFF)"
)

_IMAGE_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")
# Signatures of other binary formats people upload by mistake, for a precise refusal message.
_BINARY_SIGNATURES: dict[bytes, str] = {
    b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive",
    b"\x7fELF": "a program",
    b"RIFF": "a media file",
    b"Rar!": "a RAR archive",
    b"7z\xbc\xaf": "a 7-Zip archive",
}
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted .docx/.pptx/.xlsx is an OLE file holding these streams (MS-OFFCRYPTO), names in UTF-16LE.
_ENCRYPTED_STREAMS = ("EncryptedPackage".encode("utf-16-le"), "EncryptionInfo".encode("utf-16-le"))
_OOXML_MAIN = {"word/document.xml": "docx", "ppt/presentation.xml": "pptx", "xl/workbook.xml": "xlsx"}
_HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
_HTML_START = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>])", re.I | re.S
)
_HTML_BODY = re.compile(rb"<body[\s>]", re.I)
_OLD_OFFICE = "old Office format: save it as .docx, .pptx or .xlsx and upload that"


class UnsupportedFileType(ValueError):
    """The message tells the user what the content is and what is accepted."""


@dataclass(frozen=True)
class DetectedType:
    source_type: SourceType


def detect_source_type(data: bytes, filename: str) -> DetectedType:
    suffix = PurePath(filename).suffix.lower()
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return DetectedType("pdf")
    if suffix == ".pdf":
        raise _refused(f"The content is not a PDF{_described(data)}")
    if data.startswith(_IMAGE_SIGNATURES):
        return DetectedType("image")
    if data.startswith(_OLE):
        raise _refused(_ole_reason(data))
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return DetectedType(zip_type(data))
    described = next((what for sig, what in _BINARY_SIGNATURES.items() if data.startswith(sig)), None)
    if described:
        raise _refused(f"The content looks like {described}")
    if not _looks_like_text(data[:65536]):
        raise _refused("The content is not text")
    if looks_like_html(data, suffix):
        return DetectedType("html")
    return DetectedType("text" if suffix == ".txt" else "markdown")


def looks_like_html(data: bytes, suffix: str = "") -> bool:
    """The rule: a web page starts (after a BOM, blanks and comments) with `<!DOCTYPE html` or `<html`,
    or holds a `<body` tag in its first 64 KiB, or is named .html/.htm/.xhtml and starts with `<`.
    Markdown that holds inline HTML (a `<div>`, a `<details>`, an `<img>`) is none of these."""
    head = data[:65536]
    if _HTML_START.match(head) or _HTML_BODY.search(head):
        return True
    return suffix in _HTML_SUFFIXES and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def zip_type(data: bytes) -> SourceType:
    """docx/pptx/xlsx/epub from the archive's member names (its central directory only)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "mimetype" in names and "META-INF/container.xml" in names:
                return "epub"
            if "[Content_Types].xml" in names:
                for member, source_type in _OOXML_MAIN.items():
                    if member in names:
                        return source_type  # type: ignore[return-value]
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise _refused(f"The file is a damaged ZIP archive ({error})") from error
    raise _refused(
        "The content is a ZIP archive but not an Office document or an e-book; "
        "a ZIP of a course is uploaded as a batch (POST .../documents/batch, or 'Upload a folder or ZIP')"
    )


def _ole_reason(data: bytes) -> str:
    if any(stream in data[: 4 * 1024 * 1024] for stream in _ENCRYPTED_STREAMS) or any(
        stream in data[-1024 * 1024 :] for stream in _ENCRYPTED_STREAMS
    ):
        return (
            "The Office document is encrypted (password-protected): remove the password and upload it again"
        )
    return f"The content is an {_OLD_OFFICE}"


def _described(data: bytes) -> str:
    if data.startswith(_IMAGE_SIGNATURES):
        return " (it looks like an image)"
    if data.startswith(b"PK\x03\x04"):
        return " (it looks like a ZIP archive or an Office document)"
    described = next((what for sig, what in _BINARY_SIGNATURES.items() if data.startswith(sig)), None)
    return f" (it looks like {described})" if described else ""


def _refused(reason: str) -> UnsupportedFileType:
    return UnsupportedFileType(f"{reason}; accepted types are {ACCEPTED_TYPES}.")


def _looks_like_text(sample: bytes) -> bool:
    """Control bytes other than tab/newline/CR (and NUL, stripped later) are rare in any text encoding."""
    if not sample:
        return True
    control = sum(1 for byte in sample if byte < 32 and byte not in (0, 9, 10, 12, 13))
    if control / len(sample) > 0.01:
        return False
    try:
        sample.decode("utf-8")
        return True
    except UnicodeDecodeError as error:
        # A cut multi-byte character at the end of the sample is still text.
        if error.start >= len(sample) - 4:
            return True
    # Not UTF-8: still text if it is mostly printable in a single-byte encoding (the worker will say why).
    high = sum(1 for byte in sample if byte >= 0x80)
    return high / len(sample) < 0.3

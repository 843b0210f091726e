"""Decides an upload's type from its bytes, not its name: PDF, Markdown or plain text, or refused."""

from dataclasses import dataclass
from pathlib import PurePath

# Signatures of common binary formats people upload by mistake, for a precise refusal message.
_BINARY_SIGNATURES: dict[bytes, str] = {
    b"\x89PNG\r\n\x1a\n": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"PK\x03\x04": "a ZIP archive (or an Office document)",
    b"\x1f\x8b": "a gzip archive",
    b"\xd0\xcf\x11\xe0": "an old Office document",
    b"\x7fELF": "a program",
    b"RIFF": "a media file",
}
_MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd"}


class UnsupportedFileType(ValueError):
    """The message tells the user what the content is and what is accepted."""


@dataclass(frozen=True)
class DetectedType:
    source_type: str  # 'pdf' | 'markdown' | 'text'


def detect_source_type(data: bytes, filename: str) -> DetectedType:
    suffix = PurePath(filename).suffix.lower()
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return DetectedType("pdf")
    described = next((what for sig, what in _BINARY_SIGNATURES.items() if data.startswith(sig)), None)
    if suffix == ".pdf":
        raise UnsupportedFileType(
            f"The content is not a PDF{f' (it looks like {described})' if described else ''}; "
            "accepted types are PDF, Markdown and plain text."
        )
    if described:
        raise UnsupportedFileType(
            f"The content looks like {described}; accepted types are PDF, Markdown and text."
        )
    if not _looks_like_text(data[:65536]):
        raise UnsupportedFileType("The content is not text; accepted types are PDF, Markdown and plain text.")
    return DetectedType("text" if suffix == ".txt" else "markdown")


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

"""Opening a ZIP-based upload (DOCX, PPTX, XLSX, EPUB) as the hostile input it may be.

Before any format library touches the archive, every member is checked: the member count, the sizes the
central directory declares, the bytes that actually come out while inflating (a bomb can lie about its
size), encryption, and every XML member is parsed once by defusedxml, which refuses entity declarations
and external references (XXE, billion laughs). The libraries then read an archive known to be sound.
The inflating is core/text/zips.py's, shared with the course ZIP's reader; defusedxml does the XML part
(no library does all of this for an in-memory archive)."""

import io
import zipfile
from dataclasses import dataclass

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as defused_fromstring

from core.text.zips import ZIP_ERRORS, MemberRefused, inflate
from workers.parsing.types import ParseError

_XML_SUFFIXES = (".xml", ".rels", ".opf", ".ncx", ".xhtml", ".htm", ".html", ".svg", ".vml")
_XML_DECLARATION_PROBE = 512


@dataclass(frozen=True)
class ArchiveLimits:
    max_members: int = 10_000
    max_total_bytes: int = 1024 * 1024 * 1024  # inflated, all members together
    max_ratio: int = 1_000  # inflated / compressed per member, past a first megabyte

    @classmethod
    def within_memory(cls, max_memory_mb: int) -> "ArchiveLimits":
        """Inflated bytes bounded by half the parse child's address space (PARSE_MAX_MEMORY_MB)."""
        return cls(max_total_bytes=max_memory_mb * 1024 * 1024 // 2)


def checked_archive(data: bytes, limits: ArchiveLimits, *, what: str) -> zipfile.ZipFile:
    """The archive, every member inflated once within the limits and every XML member entity-free;
    raises ParseError naming the problem. `what` names the format in messages ("PowerPoint file")."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except ZIP_ERRORS as error:
        raise ParseError(f"The {what} is damaged: it is not a readable ZIP archive ({error}).") from error
    if len(members) > limits.max_members:
        raise ParseError(
            f"The {what} holds {len(members):,} parts, more than the {limits.max_members:,} allowed."
        )
    declared = sum(member.file_size for member in members)
    if declared > limits.max_total_bytes:
        raise ParseError(_too_big(what, limits))
    remaining = limits.max_total_bytes
    for member in members:
        try:
            data = inflate(archive, member, budget=remaining, max_ratio=limits.max_ratio, declared_only=True)
        except MemberRefused as refused:
            raise ParseError(_refusal(refused, member, what, limits)) from refused
        remaining -= len(data)
        # An XML part, by its name or by its first bytes, is parsed once for entities.
        declared_xml = data[:_XML_DECLARATION_PROBE].lstrip().startswith(b"<?xml")
        if declared_xml or member.filename.lower().endswith(_XML_SUFFIXES):
            _check_xml(data, member.filename, what)
    return archive


def _refusal(refused: MemberRefused, member: zipfile.ZipInfo, what: str, limits: ArchiveLimits) -> str:
    if refused.kind == "encrypted":
        return f"The {what} is encrypted (password-protected): remove the password and upload it again."
    if refused.kind == "unreadable":
        return f"The {what} is damaged: its part {member.filename!r} cannot be read ({refused.detail})."
    return _too_big(what, limits)


def _check_xml(data: bytes, name: str, what: str) -> None:
    try:
        defused_fromstring(data)
    except DefusedXmlException as error:
        raise ParseError(
            f"The {what} was refused: its part {name!r} declares XML entities or external references "
            f"({type(error).__name__}), which are never resolved."
        ) from error
    except Exception:  # malformed XML is the format library's to report (or to tolerate)
        return


def _too_big(what: str, limits: ArchiveLimits) -> str:
    return (
        f"The {what} inflates to more than {limits.max_total_bytes // (1024 * 1024):,} MB "
        "(a compression bomb, or a file too large to parse)."
    )

"""Parsing held to bounds, so a compression bomb or a 100k-page file ends `failed` with a reason and
the worker lives.

Every type in core/text/filetypes.CHILD_PARSED (PDF, page images, Office files, EPUB, HTML) is parsed in a
child process (workers/parsing/child.py) with PDF_MAX_PAGES, PARSE_MAX_CHARS,
PARSE_MAX_MEMORY_MB (RLIMIT_AS: MuPDF's allocations fail past it) and PARSE_TIMEOUT_S (the child is
killed). The child gets the allowlisted base environment only: no database URL or API key reaches the
process that opens hostile files.

Markdown and text are parsed in the worker (a thread), held to PARSE_MAX_CHARS: their parsers are
linear in a file already capped at MAX_UPLOAD_BYTES, and a process per file would cost more than
parsing the thousands of small files of an eval corpus."""

import asyncio
import json
import math
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.runtime.child_env import child_environment
from core.settings import Settings
from core.text.filetypes import CHILD_PARSED
from workers.parsing import parse_document
from workers.parsing.types import ParsedDocument, ParseError, Section

# The folder holding the `workers` package: the child imports the same code as this process.
_CODE_ROOT = str(Path(__file__).resolve().parents[2])
# pymupdf imports pymupdf.layout and pymupdf4llm when they are installed, which load numpy and
# onnxruntime: some 400 MB of address space and BLAS threads that plain text extraction does not use and
# that would count against RLIMIT_AS. A None in sys.modules makes those imports fail, as if not installed.
_CHILD = (
    "import sys; sys.modules.update({'pymupdf.layout': None, 'pymupdf4llm': None}); "
    "from workers.parsing.child import main; sys.exit(main())"
)


@dataclass(frozen=True)
class ParseLimits:
    max_pages: int
    max_chars: int
    timeout_s: float
    max_memory_mb: int

    @classmethod
    def from_settings(cls, settings: Settings) -> "ParseLimits":
        return cls(
            max_pages=settings.limits.pdf_max_pages,
            max_chars=settings.limits.parse_max_chars,
            timeout_s=settings.limits.parse_timeout_s,
            max_memory_mb=settings.limits.parse_max_memory_mb,
        )

    @property
    def memory_reason(self) -> str:
        return f"the file needs more memory than allowed to parse ({self.max_memory_mb} MB)"

    @property
    def timeout_reason(self) -> str:
        return f"parsing took longer than {self.timeout_s:g} s and was stopped"


async def parse_bounded(
    data: bytes, *, source_type: str, filename: str, title: str | None, limits: ParseLimits
) -> ParsedDocument:
    """Raises ParseError with the reason shown to the user, a bound's included."""
    if source_type not in CHILD_PARSED:
        return await asyncio.to_thread(
            parse_document, data, source_type=source_type, filename=filename, title=title,
            max_chars=limits.max_chars,
        )  # fmt: skip
    return await parse_in_child(data, source_type=source_type, filename=filename, title=title, limits=limits)


async def parse_in_child(
    data: bytes, *, source_type: str, filename: str, title: str | None, limits: ParseLimits
) -> ParsedDocument:
    header = {
        "source_type": source_type,
        "filename": filename,
        "title": title,
        "max_pages": limits.max_pages,
        "max_chars": limits.max_chars,
        "max_memory_mb": limits.max_memory_mb,
        "max_cpu_s": math.ceil(limits.timeout_s) + 10,  # only if this process is no longer there to kill it
    }
    environment = child_environment(with_settings=False)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, (_CODE_ROOT, environment.get("PYTHONPATH"))))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=environment,
    )  # fmt: skip
    try:
        async with asyncio.timeout(limits.timeout_s):
            out, _ = await process.communicate(json.dumps(header).encode() + b"\n" + data)
    except TimeoutError:
        raise ParseError(limits.timeout_reason) from None
    finally:
        if process.returncode is None:  # timed out, or the job was cancelled: never leave it running
            process.kill()
            await process.wait()
    return read_answer(out, process.returncode, limits)


def read_answer(out: bytes, returncode: int | None, limits: ParseLimits) -> ParsedDocument:
    last_line = out.rstrip(b"\n").rsplit(b"\n", 1)[-1]  # after the progress lines, the answer
    try:
        answer = json.loads(last_line.decode("utf-8", "surrogatepass")) if last_line else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):  # it died without answering: under RLIMIT_AS that is memory, mostly
        raise ParseError(f"{limits.memory_reason}; the parser stopped ({_exit_text(returncode)})")
    if answer.get("out_of_memory"):
        raise ParseError(limits.memory_reason)
    if "error" in answer:
        raise ParseError(str(answer["error"]))
    return _document(answer["document"])


def _exit_text(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


def _document(fields: dict[str, Any]) -> ParsedDocument:
    text = str(fields["text"])
    sections = []
    for section in fields["sections"]:
        start, end = int(section["char_start"]), int(section["char_end"])
        sections.append(
            Section(
                path=tuple(str(part) for part in section["path"]),
                text=text[start:end],
                char_start=start,
                char_end=end,
                page_start=_optional_int(section["page_start"]),
                page_end=_optional_int(section["page_end"]),
            )
        )
    return ParsedDocument(
        title=str(fields["title"]),
        text=text,
        sections=sections,
        page_count=_optional_int(fields["page_count"]),
        warnings=[str(warning) for warning in fields["warnings"]],
        source_type=str(fields["source_type"]),
        page_offsets=tuple(int(offset) for offset in fields["page_offsets"]),
    )


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)

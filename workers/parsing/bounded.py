"""Parsing held to bounds, so a compression bomb or a 100k-page file ends `failed` with a reason and
the worker lives.

Every type in core/text/filetypes.CHILD_PARSED (PDF, page images, Office files, EPUB, HTML) is parsed in a
child process (workers/parsing/child.py) with PDF_MAX_PAGES, PARSE_MAX_CHARS,
PARSE_MAX_MEMORY_MB (RLIMIT_AS: MuPDF's allocations fail past it) and PARSE_TIMEOUT_S (the child is
killed). Scanned pages are read by OCR in the same child (OCR_ENABLED, OCR_LANGUAGES, OCR_MAX_PAGES):
it reports each page before reading it, and each report moves the deadline to at least
OCR_PAGE_TIMEOUT_S later, so a scanned book gets time by its pages and a page that hangs is stopped.
The child gets the allowlisted base environment only: no database URL or API key reaches the process
that opens hostile files. The same child reads one page's words and boxes for the viewer's highlight on a
scan (`page_words_bounded`: OCR_PAGE_TIMEOUT_S for that page, the same memory bound), and lays out a deck's
slide for the viewer (`slide_layout_bounded`).

Markdown and text are parsed in the worker (a thread), held to PARSE_MAX_CHARS: their parsers are
linear in a file already capped at MAX_UPLOAD_BYTES, and a process per file would cost more than
parsing the thousands of small files of an eval corpus."""

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.runtime.child_env import child_environment
from core.settings.parsing import ParseSettings
from core.text.filetypes import CHILD_PARSED
from core.text.page_words import PageWords, words_from_json
from core.text.slide_layout import SlideLayout, layout_from_json
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

_READ_BYTES = 1 << 16
_PROGRESS_MAX_BYTES = 64  # {"ocr_page": n}; the answer line is never taken for one


def memory_reason(limits: ParseSettings) -> str:
    return f"the file needs more memory than allowed to parse ({limits.max_memory_mb} MB)"


def timeout_reason(limits: ParseSettings, ocr_page: int | None) -> str:
    if ocr_page is not None:
        return f"OCR of page {ocr_page} took longer than {limits.ocr_page_timeout_s:g} s and was stopped"
    return f"parsing took longer than {limits.timeout_s:g} s and was stopped"


async def parse_bounded(
    data: bytes, *, source_type: str, filename: str, title: str | None, limits: ParseSettings
) -> ParsedDocument:
    """Raises ParseError with the reason shown to the user, a bound's included."""
    if source_type not in CHILD_PARSED:
        return await asyncio.to_thread(
            parse_document, data, source_type=source_type, filename=filename, title=title,
            max_chars=limits.max_chars,
        )  # fmt: skip
    return await parse_in_child(data, source_type=source_type, filename=filename, title=title, limits=limits)


async def parse_in_child(
    data: bytes, *, source_type: str, filename: str, title: str | None, limits: ParseSettings
) -> ParsedDocument:
    header = _header(limits, source_type=source_type, filename=filename, title=title)
    out, returncode = await _run_child(header, data, limits, limits.timeout_s)
    return _document(read_answer(out, returncode, limits, "document"))


async def page_words_bounded(
    data: bytes, *, source_type: str, filename: str, page: int, limits: ParseSettings
) -> PageWords:
    """One page's words and boxes (workers/parsing/page_words.py), read in the child under the same limits
    as parsing, and OCR_PAGE_TIMEOUT_S for the page. Raises ParseError with the reason."""
    header = _header(limits, source_type=source_type, filename=filename, title=None)
    header.update(task="page_words", page=page)
    out, returncode = await _run_child(header, data, limits, limits.ocr_page_timeout_s)
    return _page_words(read_answer(out, returncode, limits, "page_words"))


async def slide_layout_bounded(
    data: bytes, *, filename: str, slide: int, limits: ParseSettings
) -> SlideLayout:
    """One slide of a deck laid out (workers/parsing/slide_layout.py), read in the child under the parsing
    limits. Raises ParseError with the reason."""
    header = _header(limits, source_type="pptx", filename=filename, title=None)
    header.update(task="slide_layout", slide=slide)
    out, returncode = await _run_child(header, data, limits, limits.timeout_s)
    return layout_from_json(read_answer(out, returncode, limits, "slide_layout"))


def _header(limits: ParseSettings, *, source_type: str, filename: str, title: str | None) -> dict[str, Any]:
    return {
        "source_type": source_type,
        "filename": filename,
        "title": title,
        "max_pages": limits.max_pages,
        "max_chars": limits.max_chars,
        "max_memory_mb": limits.max_memory_mb,
        "max_cpu_s": limits.max_cpu_s,
        "ocr_enabled": limits.ocr_enabled,
        "ocr_languages": limits.ocr_languages,
        "ocr_max_pages": limits.ocr_max_pages,
    }


async def _run_child(
    header: dict[str, Any], data: bytes, limits: ParseSettings, timeout_s: float
) -> tuple[bytes, int | None]:
    """What the child wrote, and how it ended; ParseError when it ran past its time."""
    environment = child_environment(with_settings=False)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, (_CODE_ROOT, environment.get("PYTHONPATH"))))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=environment,
    )  # fmt: skip
    loop = asyncio.get_running_loop()
    ocr_page: int | None = None  # the OCR page that set the deadline, if one did

    def on_progress(page: int) -> None:
        nonlocal ocr_page
        extended = loop.time() + limits.ocr_page_timeout_s
        if extended > (timer.when() or 0.0):
            timer.reschedule(extended)
            ocr_page = page

    try:
        async with asyncio.timeout(timeout_s) as timer:
            await _send(process, json.dumps(header).encode() + b"\n" + data)
            assert process.stdout is not None
            out = await _read_output(process.stdout, on_progress)
            await process.wait()
    except TimeoutError:
        raise ParseError(timeout_reason(limits, ocr_page or header.get("page"))) from None
    finally:
        if process.returncode is None:  # timed out, or the job was cancelled: never leave it running
            process.kill()
            await process.wait()
    return out, process.returncode


async def _send(process: asyncio.subprocess.Process, payload: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(payload)
        await process.stdin.drain()
        process.stdin.close()
    except (BrokenPipeError, ConnectionResetError):  # it died reading (its memory bound): its answer says
        pass


async def _read_output(stdout: asyncio.StreamReader, on_progress: Callable[[int], None]) -> bytes:
    """Everything the child writes, `on_progress(n)` called for each {"ocr_page": n} line as it comes."""
    out = bytearray()
    line_start = 0
    while chunk := await stdout.read(_READ_BYTES):
        searched = len(out)  # only the new bytes are searched: the answer line can be tens of MB
        out += chunk
        while (newline := out.find(b"\n", searched)) >= 0:
            page = _progress_page(bytes(out[line_start:newline]))
            if page is not None:
                on_progress(page)
            line_start = searched = newline + 1
    return bytes(out)


def _progress_page(line: bytes) -> int | None:
    if len(line) > _PROGRESS_MAX_BYTES or not line.startswith(b'{"ocr_page"'):
        return None
    try:
        page = json.loads(line)["ocr_page"]
    except (ValueError, KeyError, TypeError):
        return None
    return page if isinstance(page, int) else None


def read_answer(out: bytes, returncode: int | None, limits: ParseSettings, key: str) -> dict[str, Any]:
    """The child's answer under `key` ("document", "page_words"); ParseError with its reason otherwise."""
    last_line = out.rstrip(b"\n").rsplit(b"\n", 1)[-1]  # after the progress lines, the answer
    try:
        answer = json.loads(last_line.decode("utf-8", "surrogatepass")) if last_line else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):  # it died without answering: under RLIMIT_AS that is memory, mostly
        raise ParseError(f"{memory_reason(limits)}; the parser stopped ({_exit_text(returncode)})")
    if answer.get("out_of_memory"):
        raise ParseError(memory_reason(limits))
    if "error" in answer:
        raise ParseError(str(answer["error"]))
    fields = answer.get(key)
    if not isinstance(fields, dict):
        raise ParseError(f"the parser answered without a result ({_exit_text(returncode)})")
    return fields


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


def _page_words(fields: dict[str, Any]) -> PageWords:
    words = words_from_json(fields["words"])
    return PageWords(page=int(fields["page"]), source=str(fields["source"]), words=words)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)

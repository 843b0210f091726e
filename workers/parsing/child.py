"""The child process that parses one file under a memory limit (started by workers/parsing/bounded.py):
every type in core/text/filetypes.CHILD_PARSED (PDF, images, Office files, EPUB, HTML).

stdin: one JSON header line ({source_type, filename, title, max_pages, max_chars, max_memory_mb,
max_cpu_s, ocr_enabled, ocr_languages, ocr_max_pages}), then the file's bytes. stdout: progress lines
({"ocr_page": n}, before each page that goes through OCR), then one JSON object, {"document": ...} or
{"error": reason[, "out_of_memory": true]}. A header with {"task": "page_words", "page": n} reads that one
page's words and boxes instead (workers/parsing/page_words.py) and answers {"page_words": ...}; one with
{"task": "slide_layout", "slide": n} lays out a deck's slide (workers/parsing/slide_layout.py) and answers
{"slide_layout": ...}.
The limits are set before the file is read and cannot be raised again from here: RLIMIT_AS (the whole
address space) and RLIMIT_CPU, a backstop to the parent's timeout should the parent itself die.
JSON rather than pickle: this process opens hostile files, and what it answers must not be able to run
code in the worker (workers/parsing/bounded.py reads it)."""

import json
import resource
import sys
from dataclasses import asdict
from typing import Any

from workers.parsing import OcrOptions, parse_document
from workers.parsing.page_words import read_page_words
from workers.parsing.slide_layout import read_slide_layout
from workers.parsing.types import ParsedDocument, ParseError, is_out_of_memory

HEADER_MAX_BYTES = 64 * 1024
OUT_OF_MEMORY: dict[str, Any] = {"error": "out of memory", "out_of_memory": True}


def encode(doc: ParsedDocument) -> dict[str, Any]:
    """The document without each section's text: that is text[char_start:char_end], rebuilt by the
    reader (it would double the answer)."""
    fields = asdict(doc)
    for section in fields["sections"]:
        del section["text"]
    return fields


def answer_for(data: bytes, header: dict[str, Any]) -> dict[str, Any]:
    ocr = OcrOptions(
        enabled=bool(header.get("ocr_enabled", True)),
        languages=str(header.get("ocr_languages", OcrOptions.languages)),
        max_pages=int(header.get("ocr_max_pages", OcrOptions.max_pages)),
    )
    try:
        if header.get("task") == "page_words":
            image = header.get("source_type") == "image"
            words = read_page_words(data, image=image, page=int(header["page"]), ocr=ocr)
            return {"page_words": asdict(words)}
        if header.get("task") == "slide_layout":
            return {"slide_layout": asdict(read_slide_layout(data, slide=int(header["slide"])))}
        doc = parse_document(
            data,
            source_type=str(header.get("source_type", "pdf")),
            filename=str(header["filename"]),
            title=header.get("title"),
            max_pages=int(header["max_pages"]),
            max_chars=int(header["max_chars"]),
            max_memory_mb=int(header["max_memory_mb"]),
            on_ocr_page=_report_ocr_page,
            ocr=ocr,
        )
        return {"document": encode(doc)}
    except ParseError as error:
        return {"error": str(error)}
    except Exception as error:  # MemoryError, MuPDF's failed allocation, or a bug: the reason, never a trace
        if is_out_of_memory(error):
            return OUT_OF_MEMORY
        return {"error": f"the file could not be processed ({type(error).__name__})"}


def _report_ocr_page(number: int) -> None:
    sys.stdout.buffer.write(json.dumps({"ocr_page": number}).encode() + b"\n")
    sys.stdout.buffer.flush()


def main() -> int:
    header = json.loads(sys.stdin.buffer.readline(HEADER_MAX_BYTES))
    memory = int(header["max_memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(header["max_cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    try:
        answer = answer_for(sys.stdin.buffer.read(), header)
        # surrogatepass: a PDF's text can hold lone surrogates; the reader decodes the same way.
        out = json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except MemoryError:
        out = json.dumps(OUT_OF_MEMORY).encode()
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

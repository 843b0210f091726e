"""How uploads are parsed: every type but Markdown and text in a child process held to these bounds
(workers/parsing/bounded.py), a file past one ending `failed` with the reason; the memory bound is the
child's whole address space (RLIMIT_AS). Pages without a text layer (scans) and page images are read by
OCR (workers/parsing/ocr.py: PyMuPDF's Tesseract, with Debian's tesseract-ocr-eng/-por data) inside the
same child: each OCR page extends the parse deadline to at least OCR_PAGE_TIMEOUT_S after it starts, so a
scanned book is not held to PARSE_TIMEOUT_S alone and one stuck page is stopped; more scanned pages than
OCR_MAX_PAGES fail the document before any is read. OCR_LANGUAGES: Tesseract's names joined by "+"."""

import math

from pydantic import Field

from core.settings.group import SettingsGroup


class ParseSettings(SettingsGroup):
    max_pages: int = Field(default=2000, ge=1, validation_alias="PDF_MAX_PAGES")
    # Extracted text; Markdown and text too.
    max_chars: int = Field(default=20_000_000, ge=1, validation_alias="PARSE_MAX_CHARS")
    timeout_s: float = Field(default=300.0, gt=0, validation_alias="PARSE_TIMEOUT_S")
    max_memory_mb: int = Field(default=2048, ge=128, validation_alias="PARSE_MAX_MEMORY_MB")
    ocr_enabled: bool = Field(default=True, validation_alias="OCR_ENABLED")
    ocr_languages: str = Field(
        default="eng+por", pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$", validation_alias="OCR_LANGUAGES"
    )
    ocr_page_timeout_s: float = Field(default=60.0, gt=0, validation_alias="OCR_PAGE_TIMEOUT_S")
    ocr_max_pages: int = Field(default=500, ge=1, validation_alias="OCR_MAX_PAGES")

    @property
    def max_cpu_s(self) -> int:
        """RLIMIT_CPU of the child: only if the worker is no longer there to kill it, so the longest
        time the deadline can reach (every OCR page at its bound) and a margin."""
        ocr_s = self.ocr_max_pages * self.ocr_page_timeout_s if self.ocr_enabled else 0
        return math.ceil(self.timeout_s + ocr_s) + 10

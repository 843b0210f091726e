"""The words of one page with their boxes, for highlighting a cited passage on the page itself (issue 42):
the text layer's words where the page has one, else Tesseract's, read as the index read it (same render
resolution, languages and flags as workers/parsing/ocr.py), so the words match the chunks' text.

Runs in the bounded child (workers/parsing/child.py, task "page_words"): the page may be a scan of a hostile
file, and OCR takes seconds. Boxes are fractions of the page as shown (0..1, rotation applied), so the web
app lays them over pdf.js's canvas or an <img> at any zoom."""

import pymupdf

from core.text.page_words import PageWord, PageWords
from workers.parsing.ocr import OcrOptions, check_page_images, find_tessdata, render_dpi, unavailable_reason
from workers.parsing.pdf import TEXT_FLAGS, open_image, open_pdf
from workers.parsing.text import clean_page
from workers.parsing.types import ParseError


def read_page_words(data: bytes, *, image: bool, page: int, ocr: OcrOptions) -> PageWords:
    """Raises ParseError for a page the file does not have, or a scan OCR cannot read here."""
    doc = open_image(data, page) if image else open_pdf(data)
    try:
        if not 1 <= page <= doc.page_count:
            raise ParseError(f"This version has no page {page} (it has {doc.page_count:,}).")
        shown = doc.load_page(page - 1)
        # OCR exactly where the index used it: an image, or a page whose text layer holds no text.
        has_layer = not image and bool(clean_page(shown.get_text("text", flags=TEXT_FLAGS)))
        layer = shown.get_text("words", flags=TEXT_FLAGS) if has_layer else []
        source = "text"
        if not has_layer:
            reason = unavailable_reason(ocr)
            if reason:
                raise ParseError(f"This page is a scanned image and {reason}.")
            check_page_images(shown, page)
            textpage = shown.get_textpage_ocr(
                flags=TEXT_FLAGS, language=ocr.languages, dpi=render_dpi(shown), full=True,
                tessdata=str(find_tessdata(ocr.languages)),
            )  # fmt: skip
            layer = shown.get_text("words", textpage=textpage, flags=TEXT_FLAGS)
            source = "ocr"
        return PageWords(page=page, source=source, words=_placed(shown, layer))
    finally:
        doc.close()


Word = tuple[float, float, float, float, str, int, int, int]  # pymupdf's get_text("words")


def _placed(page: pymupdf.Page, words: list[Word]) -> list[PageWord]:
    """Each word's box as fractions of the page as shown: text coordinates are the unrotated page's."""
    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    turn = page.rotation_matrix
    lines: dict[tuple[int, int], int] = {}
    placed = []
    for x0, y0, x1, y1, text, block, line, _ in words:
        box = pymupdf.Rect(x0, y0, x1, y1) * turn
        number = lines.setdefault((block, line), len(lines))
        placed.append(
            PageWord(
                x0=fraction(box.x0, width), y0=fraction(box.y0, height),
                x1=fraction(box.x1, width), y1=fraction(box.y1, height), text=text, line=number,
            )
        )  # fmt: skip
    return placed


def fraction(value: float, whole: float) -> float:
    """`value` as a share of `whole`, within 0..1, to 5 decimals (a page's or a slide's coordinates)."""
    return round(min(1.0, max(0.0, value / whole)), 5)

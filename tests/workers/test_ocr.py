"""OCR of scanned pages and page images (workers/parsing/ocr.py), made in the test from pages whose
text is known (benchmarks/formats/scans.py). Tesseract's eng and por data must be installed (.ci/run does):
without them these tests fail, on purpose, rather than skip."""

import io
import re
import resource
import struct
import time
import zlib

import pymupdf
import pytest
from PIL import Image

from benchmarks.formats.scans import (
    THINK_PYTHON,
    noise_image,
    page_picture,
    portuguese_prose,
    scanned_pdf,
    text_page_pdf,
)
from core.settings.parsing import ParseSettings
from tests.workers.test_parsing import parse_children
from workers.parsing import OcrOptions, ParsedDocument, ParseError, parse_document
from workers.parsing import ocr as ocr_module
from workers.parsing.bounded import parse_bounded
from workers.parsing.pdf import NO_TEXT, TEXT_FLAGS, page_of

LIMITS = ParseSettings(max_pages=2000, max_chars=20_000_000, timeout_s=120, max_memory_mb=2048)
ENGLISH_PAGE = 20  # 0-based: Think Python's page 21, the first page of chapter 1 ("The way of the program")


@pytest.fixture(scope="module", autouse=True)
def tessdata_installed() -> None:
    if ocr_module.find_tessdata("eng+por") is None:
        pytest.fail(
            "Tesseract's eng and por data are not installed: "
            "apt-get install tesseract-ocr-eng tesseract-ocr-por"
        )


def squeeze(text: str) -> str:
    return " ".join(text.split())


def parse(data: bytes, source_type: str = "pdf", **options: object) -> tuple[ParsedDocument, list[int]]:
    calls: list[int] = []
    doc = parse_document(
        data, source_type=source_type, filename=f"scan.{source_type}", on_ocr_page=calls.append,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    return doc, calls


@pytest.fixture(scope="module")
def english_scan() -> bytes:
    return scanned_pdf(THINK_PYTHON, [ENGLISH_PAGE], dpi=200)


@pytest.fixture(scope="module")
def portuguese_page() -> bytes:
    return text_page_pdf(portuguese_prose())


def test_a_scanned_page_is_read_by_ocr(english_scan: bytes) -> None:
    doc, calls = parse(english_scan)
    assert calls == [1] and doc.page_count == 1
    assert "think like a computer scientist" in squeeze(doc.text)
    assert "combines some of the best features of mathematics" in squeeze(doc.text)
    assert doc.warnings == ["page 1: text recognised by OCR (scanned images)"]
    assert all(section.page_start == 1 for section in doc.sections)


def test_portuguese_accents_survive_ocr(portuguese_page: bytes) -> None:
    doc, calls = parse(scanned_pdf(portuguese_page, [0], dpi=300))
    assert calls == [1]
    text = squeeze(doc.text)
    assert "não" in text and "função" in text and "instruções" in text and "você" in text
    assert "uma função é uma sequência nomeada de instruções" in text


def test_a_mixed_pdf_reads_only_its_scanned_page_by_ocr() -> None:
    mixed = scanned_pdf(THINK_PYTHON, [ENGLISH_PAGE, ENGLISH_PAGE + 20], keep_text=(0,), dpi=200)
    doc, calls = parse(mixed)
    assert calls == [2] and doc.page_count == 2
    assert doc.warnings == ["page 2: text recognised by OCR (scanned images)"]
    with pymupdf.open(stream=mixed) as pdf:
        first_page = squeeze(pdf[0].get_text(flags=TEXT_FLAGS))
    assert squeeze(doc.text[: doc.page_offsets[1]]) == first_page  # the text layer, as it was
    found = re.search(r"In\s+the\s+context\s+of\s+programming,\s+a\s+function\s+is\s+a\s+named", doc.text)
    assert found and page_of(doc.page_offsets, found.start()) == 2
    assert any(section.page_end == 2 for section in doc.sections)


@pytest.mark.parametrize(("suffix", "quality"), [("png", None), ("jpeg", 80)])
def test_a_page_image_upload_is_read_by_ocr(portuguese_page: bytes, suffix: str, quality: int | None) -> None:
    with pymupdf.open(stream=portuguese_page) as pdf:
        picture = page_picture(pdf[0], dpi=250, jpeg_quality=quality)
    doc, calls = parse(picture, "image")
    assert calls == [1] and doc.page_count == 1 and doc.page_offsets == (0,)
    assert "não" in doc.text and "uma função é uma sequência nomeada" in squeeze(doc.text)


def test_a_multipage_tiff_keeps_its_page_numbers() -> None:
    frames = []
    for text in ("The first page speaks of lists.", "The second page speaks of dictionaries."):
        with pymupdf.open(stream=text_page_pdf(text, fontsize=20)) as pdf:
            frames.append(Image.open(io.BytesIO(page_picture(pdf[0], dpi=150))))
    out = io.BytesIO()
    frames[0].save(out, "TIFF", save_all=True, append_images=frames[1:])
    doc, calls = parse(out.getvalue(), "image")
    assert calls == [1, 2] and doc.page_count == 2
    assert page_of(doc.page_offsets, doc.text.index("dictionaries")) == 2
    assert page_of(doc.page_offsets, doc.text.index("lists")) == 1


def one_colour_png(width: int, height: int) -> bytes:
    """A valid 1-bit PNG of width x height white pixels: zlib makes the rows of zeros tiny on disk."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    compressor = zlib.compressobj(9)
    row = b"\x00" * (1 + (width + 7) // 8)
    rows = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def test_a_decompression_bomb_image_is_refused_before_decoding() -> None:
    bomb = one_colour_png(30000, 30000)  # 900 megapixels
    assert len(bomb) < 200_000
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with pytest.raises(ParseError, match=re.escape("30,000 x 30,000 pixels, more than the 100 megapixels")):
        parse_document(bomb, source_type="image", filename="bomb.png")
    assert time.perf_counter() - started < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 100 * 1024  # KB: nothing decoded


def test_a_pdf_page_declaring_a_huge_image_is_refused_before_rendering() -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_image(page.rect, stream=one_colour_png(100, 100))
    (xref,) = [image[0] for image in page.get_images()]
    doc.xref_set_key(xref, "Width", "40000")  # what the dictionary declares is what would be decoded
    doc.xref_set_key(xref, "Height", "40000")
    with pytest.raises(ParseError, match="Page 1 holds an image of 40,000 x 40,000 pixels"):
        parse(doc.tobytes())


def test_without_ocr_a_scan_fails_with_the_reason_and_a_mixed_pdf_keeps_its_text(
    english_scan: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ocr_module, "find_tessdata", lambda languages: None)
    expected = (
        "This PDF's pages are scanned images and OCR is not installed on this server "
        "(install tesseract-ocr-eng/-por; see README)."
    )
    with pytest.raises(ParseError, match=re.escape(expected)):
        parse(english_scan)
    mixed = scanned_pdf(
        THINK_PYTHON, [ENGLISH_PAGE, ENGLISH_PAGE + 1, ENGLISH_PAGE + 2], keep_text=(0,), dpi=72
    )
    doc, calls = parse(mixed)
    assert calls == [] and doc.page_count == 3 and "think like a computer scientist" in squeeze(doc.text)
    assert doc.warnings == [f"pages 2-3 are scanned images and were left out: {ocr_module.NOT_INSTALLED}"]
    with pytest.raises(ParseError, match=re.escape("scanned images and OCR is turned off on this server")):
        parse(english_scan, ocr=OcrOptions(enabled=False))


def test_more_scanned_pages_than_allowed_fail_before_any_is_read() -> None:
    scans = scanned_pdf(THINK_PYTHON, [ENGLISH_PAGE, ENGLISH_PAGE + 1, ENGLISH_PAGE + 2], dpi=72)
    with pytest.raises(ParseError, match="3 scanned pages to read by OCR, more than the 2 allowed"):
        parse(scans, ocr=OcrOptions(max_pages=2))


# Seed 0 reads as letter salad with capitals in odd places; seed 1 as lower-case vowel runs ("ooo a
# oeoea aocoo"), which unseeded noise once turned into and the case and vowel checks alone let through.
@pytest.mark.parametrize("seed", [0, 1])
def test_a_page_of_noise_is_flagged_low_confidence(seed: int) -> None:
    doc, _ = parse(noise_image(seed), "image")
    assert "page 1: text recognised with low confidence" in doc.warnings


def test_vowel_runs_are_low_confidence_and_words_of_vowels_are_not() -> None:
    salad = "ooo a ooSeooe oea oocaoaoo aaacc mceo aocoo ooamoco docano oo aoRaso ccooco ooeeo oao ecoo Rosae"
    assert ocr_module.low_confidence(salad)
    # "you", "eye" and the odd "área", "aí", "oi" of real prose are words, not vowel runs.
    prose = "you see the eye of the storm from here, and the idea is to stay out of it as long as you can"
    assert not ocr_module.low_confidence(prose)
    portuguese = "Oi! A área da casa é grande, e aí o sol entra pela janela o dia todo, como eu queria."
    assert not ocr_module.low_confidence(portuguese)


def test_a_drawing_read_by_ocr_is_no_text() -> None:
    with pytest.raises(ParseError, match=re.escape(NO_TEXT)):
        parse(_a_drawing())


def _a_drawing() -> bytes:
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(50, 50, 300, 300), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    return doc.tobytes()


def test_text_layer_pages_are_never_low_confidence() -> None:
    # The proxy's false-positive check: prose, code, tables of contents and the index of a real book.
    with pymupdf.open(THINK_PYTHON) as pdf:
        flagged = [page.number + 1 for page in pdf if ocr_module.low_confidence(page.get_text())]
    assert flagged == []
    assert not ocr_module.low_confidence(portuguese_prose())


async def test_a_scan_parsed_in_the_child_is_the_same_document(english_scan: bytes) -> None:
    in_process, _ = parse(english_scan)
    bounded = await parse_bounded(
        english_scan, source_type="pdf", filename="scan.pdf", title=None, limits=LIMITS
    )
    assert bounded == in_process


async def test_an_ocr_page_past_its_bound_stops_the_child_with_the_reason() -> None:
    # Dense A3 pages: each takes several seconds to read. The deadline is max(PARSE_TIMEOUT_S from the
    # start, OCR_PAGE_TIMEOUT_S from the page's start): with both at 2.5 s the child starts within the
    # first, page 1 starts before it ends, and its OCR outlasts the second.
    dense = pymupdf.open()
    page = dense.new_page(width=842, height=1191)
    left = page.insert_textbox(
        pymupdf.Rect(30, 30, 812, 1161), (portuguese_prose() + "\n") * 3, fontname="tiro", fontsize=9
    )
    assert left >= 0
    scans = scanned_pdf(dense.tobytes(), [0, 0, 0], dpi=300)
    limits = LIMITS.model_copy(update=dict(timeout_s=2.5, ocr_page_timeout_s=2.5))
    started = time.monotonic()
    with pytest.raises(ParseError, match=r"OCR of page [123] took longer than 2.5 s and was stopped"):
        await parse_bounded(scans, source_type="pdf", filename="dense.pdf", title=None, limits=limits)
    assert time.monotonic() - started < 30
    assert not parse_children()

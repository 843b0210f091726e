"""One page's words and boxes (workers/parsing/page_words.py, issue 42): a scanned page's words read by OCR
land where the book prints them, a page with text gives its text layer without OCR, a turned page gives
boxes as it is shown, and the bounded child reads it as the worker's parser does, within its time.
Tesseract's eng and por data must be installed (.ci/run does): without them these tests fail."""

import pymupdf
import pytest

from benchmarks.formats.scans import THINK_PYTHON, scanned_pdf
from core.settings.parsing import ParseSettings
from core.text.page_words import PageWord
from workers.parsing import OcrOptions
from workers.parsing import ocr as ocr_module
from workers.parsing.bounded import page_words_bounded
from workers.parsing.page_words import read_page_words
from workers.parsing.types import ParseError

DEBUGGING_PAGE = 26  # 0-based: Think Python's "1.7 Debugging"
LIMITS = ParseSettings(max_pages=2000, max_chars=20_000_000, timeout_s=120, max_memory_mb=2048)


@pytest.fixture(scope="module", autouse=True)
def tessdata_installed() -> None:
    if ocr_module.find_tessdata("eng+por") is None:
        pytest.fail("Tesseract's eng and por data are not installed: apt-get install tesseract-ocr-eng/-por")


@pytest.fixture(scope="module")
def scan() -> bytes:
    return scanned_pdf(THINK_PYTHON, [DEBUGGING_PAGE], dpi=200)


def printed(word: str, *, rotation: int = 0) -> pymupdf.Rect:
    """Where the book's own text layer puts `word` on the Debugging page, as fractions of the page shown."""
    with pymupdf.open(THINK_PYTHON) as book:
        page = book[DEBUGGING_PAGE]
        page.set_rotation(rotation)
        box = (
            next(pymupdf.Rect(w[:4]) for w in page.get_text("words") if w[4].strip("().,;:") == word)
            * page.rotation_matrix
        )
        width, height = page.rect.width, page.rect.height
        return pymupdf.Rect(box.x0 / width, box.y0 / height, box.x1 / width, box.y1 / height)


def found(words: list[PageWord], text: str) -> PageWord:
    return next(w for w in words if w.text.strip("().,;:") == text)


def test_a_scanned_pages_words_land_where_the_book_prints_them(scan: bytes) -> None:
    read = read_page_words(scan, image=False, page=1, ocr=OcrOptions())
    assert read.source == "ocr" and read.page == 1 and len(read.words) > 200
    for word in ("whimsical", "Reeves", "obstinate"):
        box, truth = found(read.words, word), printed(word)
        center = pymupdf.Point((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2)
        near = pymupdf.Rect(truth.x0 - 0.01, truth.y0 - 0.01, truth.x1 + 0.01, truth.y1 + 0.01)
        assert center in near, (word, box, truth)
    # The words of one printed line share a line number; the next line has another.
    assert found(read.words, "whimsical").line == found(read.words, "reasons").line
    assert found(read.words, "whimsical").line != found(read.words, "Programming").line


def test_a_page_with_text_gives_its_text_layer_without_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    with pymupdf.open(THINK_PYTHON) as book, pymupdf.open() as out:
        out.insert_pdf(book, from_page=DEBUGGING_PAGE, to_page=DEBUGGING_PAGE)
        data = out.tobytes()
    monkeypatch.setattr(pymupdf.Page, "get_textpage_ocr", lambda *_, **__: pytest.fail("OCR ran"))
    read = read_page_words(data, image=False, page=1, ocr=OcrOptions())
    assert read.source == "text"
    box, truth = found(read.words, "whimsical"), printed("whimsical")
    assert (box.x0, box.y0, box.x1, box.y1) == pytest.approx(tuple(truth), abs=1e-4)


def test_a_turned_page_gives_its_boxes_as_it_is_shown() -> None:
    with pymupdf.open(THINK_PYTHON) as book, pymupdf.open() as out:
        out.insert_pdf(book, from_page=DEBUGGING_PAGE, to_page=DEBUGGING_PAGE)
        out[0].set_rotation(90)
        data = out.tobytes()
    read = read_page_words(data, image=False, page=1, ocr=OcrOptions())
    box, truth = found(read.words, "whimsical"), printed("whimsical", rotation=90)
    assert (box.x0, box.y0, box.x1, box.y1) == pytest.approx(tuple(truth), abs=1e-4)
    assert box.x0 > 0.5  # a line near the top of the page stands at the right once turned clockwise


def test_a_page_image_is_read_by_ocr() -> None:
    with pymupdf.open(THINK_PYTHON) as book:
        photo = book[DEBUGGING_PAGE].get_pixmap(dpi=150, colorspace=pymupdf.csGRAY).tobytes("png")
    read = read_page_words(photo, image=True, page=1, ocr=OcrOptions())
    assert read.source == "ocr" and any(w.text == "whimsical" for w in read.words)


def test_a_page_the_file_does_not_have_and_ocr_turned_off_are_refused(scan: bytes) -> None:
    with pytest.raises(ParseError, match="no page 2"):
        read_page_words(scan, image=False, page=2, ocr=OcrOptions())
    with pytest.raises(ParseError, match="OCR is turned off"):
        read_page_words(scan, image=False, page=1, ocr=OcrOptions(enabled=False))


async def test_the_bounded_child_reads_the_page_as_in_process_and_within_its_time(scan: bytes) -> None:
    read = await page_words_bounded(scan, source_type="pdf", filename="scan.pdf", page=1, limits=LIMITS)
    assert read == read_page_words(scan, image=False, page=1, ocr=OcrOptions())
    with pytest.raises(ParseError, match="no page 3"):
        await page_words_bounded(scan, source_type="pdf", filename="scan.pdf", page=3, limits=LIMITS)
    hurried = LIMITS.model_copy(update={"ocr_page_timeout_s": 0.2})
    with pytest.raises(ParseError, match=r"OCR of page 1 took longer than 0\.2 s"):
        await page_words_bounded(scan, source_type="pdf", filename="scan.pdf", page=1, limits=hurried)

"""OCR of pages without a text layer (scans, page images): PyMuPDF's built-in Tesseract, offline.

Pages are rendered at OCR_DPI (300, Tesseract's recommended resolution) and recognised with the
OCR_LANGUAGES models (eng+por: Portuguese keeps its accents, English its plain words). A page larger than
A3 is rendered at a lower dpi so that no render exceeds MAX_RENDER_PIXELS; an image past MAX_IMAGE_PIXELS
is refused before anything decodes it (a decompression bomb: a one-colour PNG of 30000 x 30000 pixels is
100 KB on disk and 900 MB decoded). Time and memory are bounded by the parse child around this
(workers/parsing/bounded.py: OCR_PAGE_TIMEOUT_S per page, PARSE_MAX_MEMORY_MB)."""

import functools
import glob
import io
import math
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from workers.parsing.text import clean_page, describe_pages
from workers.parsing.types import OutOfMemory, ParseError, is_out_of_memory, too_many_chars

OCR_DPI = 300
# An A3 page at 300 dpi is 17.4 MP. Measured (eng+por, one page in the parse child): an A4 render at
# 300 dpi (8.7 MP) peaks at 690 MB of address space, A3 (17.4 MP) at 830 MB, A2 (34.8 MP) at 1120 MB.
# At this cap any page reads within 1024 MB; a larger page is read at a lower dpi (A2 at 227).
MAX_RENDER_PIXELS = 20_000_000
MAX_IMAGE_PIXELS = 100_000_000
# A page counts as a scan when what it draws (images, paths) covers at least this share of it: a rule
# line or a small logo alone on an otherwise blank page is not worth seconds of OCR.
_MIN_DRAWN_SHARE = 0.002
_DRAWN = {"fill-path", "stroke-path", "fill-image", "fill-imgmask", "fill-shade", "fill-text", "stroke-text"}
_LANGUAGES = re.compile(r"[A-Za-z_]+(?:\+[A-Za-z_]+)*")
_TESSDATA_GLOBS = ("/usr/share/tesseract-ocr/*/tessdata", "/usr/share/tessdata", "/usr/local/share/tessdata")

NOT_INSTALLED = "OCR is not installed on this server (install tesseract-ocr-eng/-por; see README)"
TURNED_OFF = "OCR is turned off on this server (OCR_ENABLED)"


@dataclass(frozen=True)
class OcrOptions:
    enabled: bool = True
    languages: str = "eng+por"
    max_pages: int = 500


def unavailable_reason(options: OcrOptions) -> str | None:
    """Why OCR cannot run here, or None when it can."""
    if not options.enabled:
        return TURNED_OFF
    return None if find_tessdata(options.languages) else NOT_INSTALLED


@functools.cache
def find_tessdata(languages: str) -> str | None:
    """The folder holding a .traineddata file for each of `languages` ("eng+por"), or None."""
    if not _LANGUAGES.fullmatch(languages):  # the names become file names: nothing but letters
        return None
    names = languages.split("+")
    candidates = [os.environ.get("TESSDATA_PREFIX", ""), *sorted(
        (path for pattern in _TESSDATA_GLOBS for path in glob.glob(pattern)), reverse=True
    )]  # fmt: skip
    for folder in filter(None, candidates):
        if all((Path(folder) / f"{name}.traineddata").is_file() for name in names):
            return folder
    try:  # a Tesseract installed elsewhere: pymupdf asks `tesseract --list-langs`
        folder = str(pymupdf.get_tessdata())
    except Exception:  # it raises when there is none
        return None
    return folder if all((Path(folder) / f"{name}.traineddata").is_file() for name in names) else None


def is_scanned(page: pymupdf.Page) -> bool:
    """A page without extractable text (checked by the caller) that draws images or paths over a
    meaningful part of itself: a scan, or text drawn as outlines."""
    area = abs(page.rect)
    if not area:
        return False
    drawn = 0.0
    for kind, box in page.get_bboxlog():
        if kind in _DRAWN:
            drawn += abs(pymupdf.Rect(box) & page.rect)
            if drawn >= _MIN_DRAWN_SHARE * area:
                return True
    return False


def check_page_images(page: pymupdf.Page, number: int) -> None:
    """Refuses a page holding an image past MAX_IMAGE_PIXELS, read from its dictionary (nothing decoded)."""
    for image in page.get_images(full=True):
        width, height = int(image[2]), int(image[3])
        if width * height > MAX_IMAGE_PIXELS:
            raise ParseError(_too_large(f"Page {number} holds an image of", width, height))


def check_image_upload(data: bytes, frames: int) -> None:
    """Refuses an upload whose first `frames` images (a TIFF's pages) are past MAX_IMAGE_PIXELS: Pillow
    reads the sizes from the headers and decodes nothing (Pillow comes with python-pptx)."""
    from PIL import JpegImagePlugin, PngImagePlugin, TiffImagePlugin

    # The plugin classes themselves, not Image.open: its own bomb check would refuse before we know the
    # size, and only the three types core/text/filetypes.py lets in are tried.
    opener = {b"\x89P": PngImagePlugin.PngImageFile, b"\xff\xd8": JpegImagePlugin.JpegImageFile}.get(
        data[:2], TiffImagePlugin.TiffImageFile
    )
    try:
        with opener(io.BytesIO(data)) as image:
            for frame in range(frames):
                image.seek(frame)
                width, height = image.size
                if width * height > MAX_IMAGE_PIXELS:
                    where = "The image is" if frames == 1 else f"Page {frame + 1} of the image is"
                    raise ParseError(_too_large(where, width, height))
    except (EOFError, OSError, ValueError, SyntaxError, struct.error):
        raise ParseError("The image is damaged or in a form that cannot be read.") from None


def _too_large(where: str, width: int, height: int) -> str:
    limit = MAX_IMAGE_PIXELS // 1_000_000
    return f"{where} {width:,} x {height:,} pixels, more than the {limit} megapixels allowed for OCR."


def render_dpi(page: pymupdf.Page) -> int:
    """OCR_DPI, or less for a page so large that its render would pass MAX_RENDER_PIXELS."""
    square_inches = abs(page.rect) / (72 * 72)
    if not square_inches:
        return OCR_DPI
    return max(1, min(OCR_DPI, int(math.sqrt(MAX_RENDER_PIXELS / square_inches))))


def recognise(page: pymupdf.Page, *, languages: str, tessdata: str, flags: int) -> str:
    """The page's text as Tesseract reads it from a render (full=True: the whole page, not only its
    images, so text drawn as outlines is read too)."""
    textpage = page.get_textpage_ocr(
        flags=flags, language=languages, dpi=render_dpi(page), full=True, tessdata=tessdata
    )
    return str(page.get_text("text", textpage=textpage, flags=flags))


# Low confidence. Tesseract's word confidences do not come through get_textpage_ocr, so the recognised
# text is judged by its shape. What noise, photos and unreadable scans turn into is letter salad:
# capitals in odd places ("eeCoRe NasOR"), runs of capitals ("RERNRR DD MD"), words without a vowel.
# Measured on Think Python's 270 text-layer pages (prose, code, tables of contents, index) against what
# Tesseract reads from noise images: irregular case at most 1% of words there, 8-22% in noise; all capitals
# at most 4.5% (noise up to 29%); no vowel at most 9% (noise up to 37%). Each bound sits between.
# Some noise reads as lower-case vowel runs instead ("ooo a oeoea aocoo"): words of three or more
# letters that are all vowels (y not counted) are at most 0.3% of words on those pages and in any 2,000
# characters of Pense em Python's Markdown, and 23% in such noise (python -m benchmarks.formats.ocr_noise).
# And a page whose marks come out as symbols with no letter or digit ("| ~ — ;") is no text either.
_WORD = re.compile(r"[^\W\d_]{2,}")
# lower, UPPER, Capitalised, camelCase or CamelCase (identifiers in code and in the index of a book).
_REGULAR_CASE = re.compile(r"[A-ZÀ-Þ]+|(?:[A-ZÀ-Þ]?[^\W\d_A-ZÀ-Þ]+)+")
_VOWELS = frozenset("aeiouyàáâãäèéêëìíîïòóôõöùúûü")
_PURE_VOWELS = _VOWELS - {"y"}  # "you", "eye" are words
_MAX_IRREGULAR, _MAX_CAPITALS, _MAX_VOWELLESS, _MAX_ALL_VOWELS = 0.05, 0.10, 0.20, 0.05
LOW_CONFIDENCE = "text recognised with low confidence"  # the warning that flags a page
_MIN_WORDS, _MIN_CHARS = 10, 20  # less recognised text than this is not judged (a page number, a caption)


@dataclass(frozen=True)
class WordSignals:
    """The share of a text's words (two or more letters) that each sign of letter salad counts."""

    irregular: float
    capitals: float
    vowelless: float
    all_vowels: float


def word_signals(text: str) -> WordSignals | None:
    """None for text with too few words to judge."""
    words = _WORD.findall(text)
    if len(words) < _MIN_WORDS:
        return None
    return WordSignals(
        irregular=sum(not _REGULAR_CASE.fullmatch(word) for word in words) / len(words),
        capitals=sum(word.isupper() for word in words) / len(words),
        vowelless=sum(_VOWELS.isdisjoint(word.lower()) for word in words) / len(words),
        all_vowels=sum(len(word) >= 3 and _PURE_VOWELS.issuperset(word.lower()) for word in words)
        / len(words),
    )


def low_confidence(text: str) -> bool:
    """Whether recognised text looks like OCR of something that is no text, or of an unreadable scan."""
    tokens = text.split()
    if sum(map(len, tokens)) >= _MIN_CHARS and not any(char.isalnum() for token in tokens for char in token):
        return True
    signals = word_signals(text)
    return signals is not None and (
        signals.irregular > _MAX_IRREGULAR
        or signals.capitals > _MAX_CAPITALS
        or signals.vowelless > _MAX_VOWELLESS
        or signals.all_vowels > _MAX_ALL_VOWELS
    )


def recognise_pages(
    doc: pymupdf.Document,
    page_texts: list[str],
    scanned: list[int],
    *,
    options: OcrOptions,
    kind: str,
    flags: int,
    max_chars: int | None = None,
    on_page: Callable[[int], None] | None = None,
) -> tuple[list[str], list[int]]:
    """Reads the `scanned` pages (1-based) by OCR into `page_texts`; returns the warnings and the pages
    OCR failed on. `kind` names the file in reasons ("PDF", "image")."""
    reason = unavailable_reason(options)
    if reason:
        if not any(page_texts):  # nothing to index: the file fails, with what would make it work
            what = "This PDF's pages are scanned images" if kind == "PDF" else f"This {kind} is read by OCR"
            raise ParseError(f"{what} and {reason}.")
        are = "is a scanned image" if len(scanned) == 1 else "are scanned images"
        return [f"{describe_pages(scanned)} {are} and {_was(scanned)} left out: {reason}"], []
    if len(scanned) > options.max_pages:
        raise ParseError(
            f"The {kind} has {len(scanned):,} scanned pages to read by OCR, more than the "
            f"{options.max_pages:,} allowed."
        )
    for number in scanned:  # every page checked before the first render: a bomb fails at once
        check_page_images(doc.load_page(number - 1), number)
    tessdata = str(find_tessdata(options.languages))
    total = sum(len(text) for text in page_texts)
    recognised: list[int] = []
    failed: list[int] = []
    unsure: list[int] = []
    for number in scanned:
        if on_page is not None:
            on_page(number)  # the bounded parent gives this page OCR_PAGE_TIMEOUT_S from now
        try:
            raw = recognise(
                doc.load_page(number - 1), languages=options.languages, tessdata=tessdata, flags=flags
            )
        except Exception as error:  # as for text extraction: one broken page does not sink the file
            if is_out_of_memory(error):
                raise OutOfMemory(str(error)) from None
            failed.append(number)
            continue
        text = clean_page(raw)
        page_texts[number - 1] = text
        total += len(text)
        if max_chars is not None and total > max_chars:
            raise too_many_chars(max_chars)
        if text:
            recognised.append(number)
            if low_confidence(text):
                unsure.append(number)
    warnings = (
        [f"{describe_pages(recognised)}: text recognised by OCR (scanned images)"] if recognised else []
    )
    if unsure:
        warnings.append(f"{describe_pages(unsure)}: {LOW_CONFIDENCE}")
    if failed:
        warnings.append(f"{describe_pages(failed)} could not be read by OCR and {_was(failed)} left out")
    return warnings, failed


def _was(pages: list[int]) -> str:
    return "was" if len(pages) == 1 else "were"

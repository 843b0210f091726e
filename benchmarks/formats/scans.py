"""Scanned pages made from text whose words are known, for the OCR tests and benchmarks/formats/ocr_cer.py.

A page with a text layer is rendered to pixels (as a scanner would see it) and the picture becomes a
PDF page with no text layer; optionally degraded as real scans are: a lower resolution, a small
rotation, JPEG artefacts. The text the page was drawn from is the ground truth.
"""

import io
import re
from pathlib import Path

import numpy as np
import pymupdf
from PIL import Image

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
THINK_PYTHON = DATA / "thinkpython2" / "thinkpython2.pdf"
PENSE_PYTHON = DATA / "pense-python"

# Base-14 Times draws Latin-1 (the accents of Portuguese); typographic quotes and dashes are not in it.
_LATIN1 = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-", "…": "..."})


def portuguese_prose(chapter: str = "03-funcoes.md", max_chars: int = 1800) -> str:
    """Paragraphs of prose from a chapter of Pense em Python (no headings, code or lists), in Latin-1."""
    text = (PENSE_PYTHON / chapter).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    paragraphs: list[str] = []
    for paragraph in text.split("\n\n"):
        paragraph = " ".join(paragraph.replace("`", "").split()).translate(_LATIN1)
        if not paragraph or paragraph[0] in "#>-*|0123456789" or not paragraph.isprintable():
            continue
        if sum(len(p) for p in paragraphs) + len(paragraph) > max_chars:
            break
        paragraphs.append(paragraph.encode("latin-1", "ignore").decode("latin-1"))
    return "\n\n".join(paragraphs)


def text_page_pdf(text: str, *, fontsize: float = 11) -> bytes:
    """An A4 page with `text` set in Times, with a text layer."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left = page.insert_textbox(pymupdf.Rect(60, 60, 535, 800), text, fontname="tiro", fontsize=fontsize)
    assert left >= 0, "the text does not fit the page"
    data = doc.tobytes()
    doc.close()
    return data


def page_picture(
    page: pymupdf.Page, *, dpi: int, rotate: float = 0.0, jpeg_quality: int | None = None
) -> bytes:
    """The page as a scanner would see it: PNG (or JPEG at `jpeg_quality`), rotated by `rotate` degrees."""
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
    picture = Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)
    if rotate:
        picture = picture.rotate(rotate, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=255)
    out = io.BytesIO()
    if jpeg_quality is None:
        picture.save(out, "PNG", dpi=(dpi, dpi))
    else:
        picture.save(out, "JPEG", quality=jpeg_quality, dpi=(dpi, dpi))
    return out.getvalue()


def scanned_pdf(
    source: bytes | Path, pages: list[int], *, keep_text: tuple[int, ...] = (), **how: object
) -> bytes:
    """A PDF of `source`'s `pages` (0-based), each replaced by its picture (page_picture's `how`), except
    the pages of `keep_text` (indexes into `pages`), copied with their text layer."""
    with pymupdf.open(stream=source if isinstance(source, bytes) else source.read_bytes()) as src:
        out = pymupdf.open()
        for position, number in enumerate(pages):
            if position in keep_text:
                out.insert_pdf(src, from_page=number, to_page=number)
                continue
            page = src.load_page(number)
            picture = page_picture(page, **how)  # type: ignore[arg-type]
            scan = out.new_page(width=page.rect.width, height=page.rect.height)
            scan.insert_image(scan.rect, stream=picture)
        data = out.tobytes()
        out.close()
    return data


def page_text(source: bytes | Path, number: int) -> str:
    """The text layer of one page (0-based): the ground truth of its scan."""
    with pymupdf.open(stream=source if isinstance(source, bytes) else source.read_bytes()) as src:
        return str(src.load_page(number).get_text())


def noise_image(seed: int, size: tuple[int, int] = (900, 600)) -> bytes:
    """A PNG of Gaussian grey noise (mean 128, sigma 40) at 300 dpi, seeded: Tesseract reads each seed's
    picture the same way every run. Small: Tesseract reads noise slowly (a full page takes minutes)."""
    width, height = size
    pixels = np.random.default_rng(seed).normal(128, 40, (height, width)).clip(0, 255).astype(np.uint8)
    Image.fromarray(pixels, "L").save(png := io.BytesIO(), "PNG", dpi=(300, 300))
    return png.getvalue()

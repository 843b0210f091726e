"""A course in every format, built from the shared data for the ingestion benchmark
(benchmarks/formats/ingest.py --formats): the same Rust-book text as a lecture deck, a Word handout, a saved
web page, an e-book and a glossary sheet; Think Python pages as a PDF, as scans (a PDF of page images) and
as a page photo."""

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pymupdf
from docx import Document as WordDocument
from markdown_it import MarkdownIt
from openpyxl import Workbook
from pptx import Presentation

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
PDF = DATA / "thinkpython2" / "thinkpython2.pdf"
RUST = DATA / "rust-book" / "src"
CHAPTERS = ["ch04-01-what-is-ownership.md", "ch04-02-references-and-borrowing.md", "ch08-02-strings.md"]
PDF_PAGES = range(20, 60)  # text pages of the book body
SCANNED_PAGES = range(20, 25)
SCAN_DPI = 200


@dataclass(frozen=True)
class CourseFile:
    format: str
    filename: str
    content: bytes
    units: int  # pages or slides; 0 where the format has neither


_HEADING = re.compile(r"^(#{1,3}) (.+)$")


def sections(names: list[str] = CHAPTERS) -> list[tuple[int, str, str]]:
    """(level, heading, body Markdown) of the chapters, code blocks included."""
    found: list[tuple[int, str, str]] = []
    for name in names:
        level, heading, body = 1, name, []
        for line in (RUST / name).read_text().splitlines():
            match = _HEADING.match(line)
            if match:
                if body:
                    found.append((level, heading, "\n".join(body).strip()))
                level, heading, body = len(match.group(1)), match.group(2), []
            else:
                body.append(line)
        found.append((level, heading, "\n".join(body).strip()))
    return [item for item in found if item[2]]


def deck() -> CourseFile:
    presentation = Presentation()
    slides = 0
    for _, heading, body in sections():
        for start in range(0, len(body), 900):  # a slide holds a screen of text
            slide = presentation.slides.add_slide(presentation.slide_layouts[1])
            slide.shapes.title.text = heading
            slide.placeholders[1].text = body[start : start + 900]
            slide.notes_slide.notes_text_frame.text = f"Say why {heading.lower()} matters."
            slides += 1
    return CourseFile("pptx", "lecture.pptx", _saved(presentation), slides)


def handout() -> CourseFile:
    document = WordDocument()
    for level, heading, body in sections():
        document.add_heading(heading, level=min(level, 3))
        for paragraph in body.split("\n\n"):
            document.add_paragraph(paragraph)
    return CourseFile("docx", "handout.docx", _saved(document), 0)


def web_page() -> CourseFile:
    markdown = "\n\n".join(f"{'#' * level} {heading}\n\n{body}" for level, heading, body in sections())
    article = MarkdownIt("commonmark").enable("table").render(markdown)
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Ownership</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/book'>Book</a></nav>"
        "<div class='cookie-banner'>We use cookies.</div>"
        f"<main><article>{article}</article></main><footer>© the authors</footer></body></html>"
    )
    return CourseFile("html", "ownership.html", page.encode(), 0)


def ebook() -> CourseFile:
    renderer = MarkdownIt("commonmark")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0"'
            ' xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        manifest, spine = [], []
        for index, name in enumerate(CHAPTERS):
            body = renderer.render((RUST / name).read_text())
            archive.writestr(
                f"OEBPS/ch{index}.xhtml",
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{name}</title></head><body>{body}</body></html>",
            )
            manifest.append(
                f'<item id="c{index}" href="ch{index}.xhtml" media-type="application/xhtml+xml"/>'
            )
            spine.append(f'<itemref idref="c{index}"/>')
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            "<dc:title>Rust chapters</dc:title></metadata>"
            f"<manifest>{''.join(manifest)}</manifest><spine>{''.join(spine)}</spine></package>",
        )
    return CourseFile("epub", "rust.epub", buffer.getvalue(), 0)


def glossary() -> CourseFile:
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Glossary"
    sheet.append(["Term", "Meaning"])
    for _, heading, body in sections():
        sheet.append([heading, body[:300]])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return CourseFile("xlsx", "glossary.xlsx", buffer.getvalue(), 0)


def pdf_pages() -> CourseFile:
    with pymupdf.open(PDF) as book, pymupdf.open() as out:
        out.insert_pdf(book, from_page=PDF_PAGES.start, to_page=PDF_PAGES.stop - 1)
        return CourseFile("pdf", "thinkpython-part.pdf", out.tobytes(), len(PDF_PAGES))


def scanned_pdf() -> CourseFile:
    """Pages rendered to images and wrapped in a PDF with no text layer: what a library scanner gives."""
    with pymupdf.open(PDF) as book, pymupdf.open() as out:
        for number in SCANNED_PAGES:
            pixmap = book[number].get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
            page = out.new_page(width=book[number].rect.width, height=book[number].rect.height)
            page.insert_image(page.rect, stream=pixmap.tobytes("png"))
        return CourseFile("pdf (scanned)", "scanned.pdf", out.tobytes(), len(SCANNED_PAGES))


def page_photo() -> CourseFile:
    with pymupdf.open(PDF) as book:
        pixmap = book[SCANNED_PAGES.start].get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
        return CourseFile("image", "page.png", pixmap.tobytes("png"), 1)


def course() -> list[CourseFile]:
    return [pdf_pages(), scanned_pdf(), page_photo(), deck(), handout(), web_page(), ebook(), glossary()]


def _saved(document: object) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()

"""An upload's type from its bytes (issue 29): a ZIP's members decide the Office format or the e-book, a
web page is told from Markdown holding inline HTML by a stated rule, encrypted and old binary Office files
are refused with what to do, and every refusal lists what is accepted."""

import io
import zipfile

import pymupdf
import pytest
from docx import Document as WordDocument
from msoffcrypto.format.ooxml import OOXMLFile
from openpyxl import Workbook
from pptx import Presentation

from core.text.filetypes import ACCEPTED_TYPES, UnsupportedFileType, detect_source_type


def saved(document: object) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()


def word() -> bytes:
    document = WordDocument()
    document.add_paragraph("A handout.")
    return saved(document)


def epub() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", "<container/>")
    return buffer.getvalue()


def course_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("course/notes.md", "# Notes")
    return buffer.getvalue()


def encrypted(plain: bytes) -> bytes:
    """A real password-protected Office file (MS-OFFCRYPTO agile encryption), as Word writes one."""
    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt("secret", out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("content", "named", "expected"),
    [
        (lambda: word(), "handout.bin", "docx"),  # the name does not decide
        (lambda: saved(Presentation()), "slides.docx", "pptx"),
        (lambda: saved(Workbook()), "sheet.zip", "xlsx"),
        (lambda: epub(), "book.zip", "epub"),
        (lambda: _pdf(), "scan.png", "pdf"),
        (lambda: _png(), "page.pdf.png", "image"),
        (lambda: b"\xff\xd8\xff\xe0" + bytes(64), "photo.jpg", "image"),
        (lambda: b"II*\x00" + bytes(64), "scan.tif", "image"),
    ],
)
def test_binary_types_are_decided_by_content(content, named: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert detect_source_type(content(), named).source_type == expected


def _pdf() -> bytes:
    document = pymupdf.open()
    document.new_page()
    return document.tobytes()


def _png() -> bytes:
    return pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 4, 4), False).tobytes("png")


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        (b"<!DOCTYPE html><html><body><p>Page</p></body></html>", "saved.md", "html"),
        (
            b"\xef\xbb\xbf\n  <!-- saved by a browser -->\n<html lang='pt'><p>P\xc3\xa1gina</p>",
            "page",
            "html",
        ),
        (b"<div class='x'>no doctype, but</div><body><p>a body tag</p></body>", "page.txt", "html"),
        (b"<section><p>A fragment saved as .html</p></section>", "fragment.html", "html"),
        # Markdown holding inline HTML stays Markdown: no doctype, no <html>, no <body>.
        (
            b"# Ownership\n\n<details><summary>Hint</summary>Moves.</details>\n\n<img src='a.png'>\n",
            "a.md",
            "markdown",
        ),
        (b"<div align='center'>\n\n# Title\n\n</div>\n\nText.\n", "README.md", "markdown"),
        (b"Plain notes about <html> tags in the text.\n", "notes.txt", "text"),
    ],
)
def test_html_is_told_from_markdown_by_the_stated_rule(text: bytes, name: str, expected: str) -> None:
    assert detect_source_type(text, name).source_type == expected


def test_an_encrypted_office_file_is_refused_as_encrypted() -> None:
    with pytest.raises(UnsupportedFileType) as refused:
        detect_source_type(encrypted(word()), "handout.docx")
    assert "encrypted (password-protected)" in str(refused.value) and ACCEPTED_TYPES in str(refused.value)


def test_an_old_binary_office_file_is_refused_with_what_to_do() -> None:
    old_doc = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + "WordDocument".encode("utf-16-le") + bytes(512)
    )
    with pytest.raises(UnsupportedFileType) as refused:
        detect_source_type(old_doc, "handout.doc")
    assert "old Office format: save it as .docx, .pptx or .xlsx" in str(refused.value)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"GIF89a" + bytes(64), "a GIF image"),
        (b"PK\x03\x04" + bytes(64), "damaged ZIP"),
        (None, "not an Office document or an e-book"),  # a plain ZIP: a course goes to the batch upload
    ],
)
def test_other_content_is_refused_listing_every_accepted_type(content: bytes | None, said: str) -> None:
    with pytest.raises(UnsupportedFileType) as refused:
        detect_source_type(content if content is not None else course_zip(), "upload.bin")
    message = str(refused.value)
    assert said in message
    for kind in ("PDF", "PowerPoint", "Word", "Excel", "EPUB", "web pages", "Markdown", "plain text", "PNG"):
        assert kind in message

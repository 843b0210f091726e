"""PowerPoint, Word and Excel uploads: structure kept (slides, headings, sheets), hostile archives refused.

Every file is built here with the format's own library; no binary is committed."""

import functools
import io
import zipfile
from collections.abc import Callable

import openpyxl
import pytest
from docx import Document
from docx.shared import Pt
from pptx import Presentation
from pptx.util import Inches

from core.settings.parsing import ParseSettings
from workers.chunking.sections import ChunkingConfig, chunk_document
from workers.parsing import ParsedDocument, ParseError, parse_document
from workers.parsing.bounded import parse_bounded
from workers.parsing.xlsx import MAX_ROWS

LIMITS = ParseSettings(max_pages=100, max_chars=10**6, timeout_s=60, max_memory_mb=512)
# Small chunks, so a chunk is cut from inside one slide and has to find its slide number itself.
SMALL = ChunkingConfig(max_chars=200, overlap_chars=0, min_chars=0)


@functools.cache  # bytes: immutable, built once for all tests
def pptx_bytes() -> bytes:
    deck = Presentation()
    deck.core_properties.title = "Lecture 3"
    first = deck.slides.add_slide(deck.slide_layouts[0])  # title slide
    first.shapes.title.text = "Ownership"
    first.placeholders[1].text = "Rust's central feature"

    second = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    second.shapes.title.text = "Borrowing"
    # Added first but lower on the slide: reading order puts it after the body.
    second.shapes.add_textbox(Inches(1), Inches(6.5), Inches(4), Inches(0.5)).text_frame.text = "Bottom note"
    body = second.placeholders[1].text_frame
    body.text = "References borrow a value"
    nested = body.add_paragraph()
    nested.text = "Shared references are read-only"
    nested.level = 1
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(6), Inches(2), Inches(2), Inches(1)).text_frame.text = "Text in a group"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    for (row, column), text in {
        (0, 0): "Kind",
        (0, 1): "Access",
        (1, 0): "&T",
        (1, 1): "read | share",
    }.items():
        table.cell(row, column).text = text
    second.notes_slide.notes_text_frame.text = "Mention the borrow checker here."

    deck.slides.add_slide(deck.slide_layouts[6])  # blank: no text at all

    fourth = deck.slides.add_slide(deck.slide_layouts[1])
    fourth.shapes.title.text = "Lifetimes"
    fourth.placeholders[1].text_frame.text = " ".join(["Lifetimes name how long references stay valid."] * 12)
    return _saved(deck)


@functools.cache
def docx_bytes() -> bytes:
    document = Document()
    document.core_properties.title = "Notes"
    document.sections[0].header.paragraphs[0].text = "HEADER-SECRET"
    document.sections[0].footer.paragraphs[0].text = "FOOTER-SECRET"
    document.add_paragraph("Before any heading.")
    document.add_heading("Memory", level=1)
    document.add_paragraph("The stack and the heap.")
    document.add_heading("Stack", level=2)
    document.add_paragraph("First item", style="List Bullet")
    document.add_paragraph("Nested item", style="List Bullet 2")
    table = document.add_table(rows=2, cols=2)
    for (row, column), text in {(0, 0): "Name", (0, 1): "Size", (1, 0): "i32", (1, 1): "4"}.items():
        table.cell(row, column).text = text
    for line in ("fn main() {", '    println!("hi");', "}"):
        run = document.add_paragraph().add_run(line)
        run.font.name = "Courier New"
        run.font.size = Pt(10)
    document.add_heading("Heap", level=2)
    document.add_paragraph("Boxes live here.")
    return _saved(document)


@functools.cache
def xlsx_bytes() -> bytes:
    workbook = openpyxl.Workbook()
    grades = workbook.active
    grades.title = "Grades"
    grades.append([])  # an empty first row, trimmed
    grades.append([None, "Student", "Score"])  # an empty first column, trimmed
    grades.append([None, "Ada", 91.0])
    grades.append([None, "Alan", 87.5])
    topics = workbook.create_sheet("Topics")
    topics.append(["Week", "Topic"])
    topics.append([1, "Ownership | borrowing"])
    return _saved(workbook)


def _saved(document: object) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()


def _replaced(data: bytes, replacements: dict[str, bytes]) -> bytes:
    """The archive with some members' content replaced (or added)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for member in source.infolist():
            if member.filename not in replacements:
                target.writestr(member, source.read(member))
        for name, content in replacements.items():
            target.writestr(name, content)
    return out.getvalue()


@pytest.fixture(scope="module")
def deck() -> ParsedDocument:
    return parse_document(pptx_bytes(), source_type="pptx", filename="lecture.pptx")


def test_pptx_one_section_per_slide_with_its_number_and_title(deck: ParsedDocument) -> None:
    # The deck's title heads every chunk already ("Lecture 3 > Borrowing"): the path is the slide's.
    assert deck.title == "Lecture 3" and deck.page_count == 4
    assert [(section.path, section.page_start) for section in deck.sections] == [
        (("Ownership",), 1),
        (("Borrowing",), 2),
        (("Slide 3",), 3),
        (("Lifetimes",), 4),
    ]
    assert "(no text on this slide)" in deck.sections[2].text


def test_pptx_body_in_reading_order_with_groups_tables_and_notes(deck: ParsedDocument) -> None:
    text = deck.sections[1].text
    assert text.count("Borrowing") == 1  # the title is the heading, not repeated in the body
    assert "- References borrow a value\n  - Shared references are read-only" in text
    assert "Text in a group" in text
    assert "| Kind | Access |\n| --- | --- |\n| &T | read \\| share |" in text
    assert text.index("References borrow") < text.index("| Kind") < text.index("Bottom note")
    assert text.index("Bottom note") < text.index("**Speaker notes:**\n\nMention the borrow checker here.")
    assert "borrow checker" not in "".join(
        section.text for section in deck.sections if section.page_start != 2
    )


def test_pptx_chunks_name_their_slide(deck: ParsedDocument) -> None:
    chunks = chunk_document(deck, SMALL)
    assert len([chunk for chunk in chunks if chunk.page_start == 4]) > 1  # slide 4 is cut in several
    for chunk in chunks:
        assert chunk.page_start == chunk.page_end
        assert chunk.section_path == deck.sections[chunk.page_start - 1].path  # type: ignore[operator]
    notes = next(chunk for chunk in chunks if "borrow checker" in chunk.text)
    assert notes.page_start == 2 and notes.section_path[-1] == "Borrowing"


def test_docx_headings_lists_tables_and_code() -> None:
    doc = parse_document(docx_bytes(), source_type="docx", filename="notes.docx")
    assert doc.title == "Notes" and doc.page_count is None
    assert [section.path for section in doc.sections] == [
        (), ("Memory",), ("Memory", "Stack"), ("Memory", "Heap"),
    ]  # fmt: skip
    assert all(section.page_start is None for section in doc.sections)
    stack = doc.sections[2].text
    assert "- First item\n  - Nested item" in stack
    assert "| Name | Size |\n| --- | --- |\n| i32 | 4 |" in stack
    assert '```\nfn main() {\n    println!("hi");\n}\n```' in stack
    assert "HEADER-SECRET" not in doc.text and "FOOTER-SECRET" not in doc.text
    assert "Boxes live here." in doc.sections[3].text


def test_xlsx_one_table_per_sheet() -> None:
    doc = parse_document(xlsx_bytes(), source_type="xlsx", filename="marks.xlsx")
    assert doc.title == "marks" and not doc.warnings
    assert [section.path for section in doc.sections] == [("Grades",), ("Topics",)]
    assert "| Student | Score |\n| --- | --- |\n| Ada | 91 |\n| Alan | 87.5 |" in doc.sections[0].text
    assert "| 1 | Ownership \\| borrowing |" in doc.sections[1].text


def test_xlsx_rows_past_the_cap_are_cut_with_a_warning() -> None:
    workbook = openpyxl.Workbook()
    for index in range(MAX_ROWS + 5):
        workbook.active.append([f"row {index}"])
    doc = parse_document(_saved(workbook), source_type="xlsx", filename="long.xlsx")
    assert f"row {MAX_ROWS - 1} |" in doc.text and f"row {MAX_ROWS} |" not in doc.text
    assert doc.warnings == [f"sheet 'Sheet': only its first {MAX_ROWS:,} rows with data were kept"]


def test_docx_title_style_names_the_document_and_roots_the_path() -> None:
    document = Document()
    document.add_heading("Course Notes", level=0)  # the Title style
    document.add_heading("Week 1", level=1)
    document.add_paragraph("Hello.")
    doc = parse_document(_saved(document), source_type="docx", filename="n.docx")
    assert doc.title == "Course Notes"
    assert doc.sections[-1].path == ("Course Notes", "Week 1")


def test_text_past_max_chars_is_refused() -> None:
    with pytest.raises(ParseError, match="more than 100 characters"):
        parse_document(pptx_bytes(), source_type="pptx", filename="l.pptx", max_chars=100)


def test_title_given_wins_then_file_name() -> None:
    assert parse_document(pptx_bytes(), source_type="pptx", filename="l.pptx", title="Given").title == "Given"
    workbook = openpyxl.Workbook()
    workbook.active.append(["x"])
    assert parse_document(_saved(workbook), source_type="xlsx", filename="dir/week 1.xlsx").title == "week 1"


def test_a_file_without_text_is_refused() -> None:
    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[6])
    with pytest.raises(ParseError, match="No text"):
        parse_document(_saved(deck), source_type="pptx", filename="empty.pptx")


def test_a_damaged_part_is_a_parse_error_not_a_traceback() -> None:
    broken = _replaced(docx_bytes(), {"word/document.xml": b"<w:document><unclosed>"})
    with pytest.raises(ParseError, match="damaged"):
        parse_document(broken, source_type="docx", filename="broken.docx")


XXE = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<!DOCTYPE w [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    b"<w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>"
)
LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">'
        % (level, b"".join([b"&lol%d;" % (level - 1) if level > 1 else b"&lol;"] * 10))
        for level in range(1, 10)
    )
    + b']>\n<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">&lol9;</p:sld>'
)


def zip_bomb_docx() -> bytes:
    """A real docx plus a member of 300 MB of zeros (1.4 MB deflated at level 1, three times faster to
    make than at the default level), streamed so the test never holds it whole."""
    out = io.BytesIO(docx_bytes())
    with (
        zipfile.ZipFile(out, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("word/media/zeros.bin", "w") as member,
    ):
        zeros = bytes(16 * 1024 * 1024)
        for _ in range(300 // 16 + 1):
            member.write(zeros)
    return out.getvalue()


def many_members() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for index in range(20_000):
            archive.writestr(f"customXml/item{index}.txt", b"")
    return out.getvalue()


def xxe_docx() -> bytes:
    return _replaced(docx_bytes(), {"word/document.xml": XXE})


def laughs_pptx() -> bytes:
    return _replaced(pptx_bytes(), {"ppt/slides/slide1.xml": LAUGHS})


def truncated_pptx() -> bytes:
    data = pptx_bytes()
    return data[: len(data) // 2]


DEFAULT_MB = 2048
# kind -> (source type, the file, the reason expected, max_memory_mb)
HOSTILE: dict[str, tuple[str, Callable[[], bytes], str, int]] = {
    "xxe": ("docx", xxe_docx, "entities", DEFAULT_MB),
    "billion laughs": ("pptx", laughs_pptx, "entities", DEFAULT_MB),
    "zip bomb": ("docx", zip_bomb_docx, "inflates to more than", 256),
    "truncated": ("pptx", truncated_pptx, "damaged", DEFAULT_MB),
    "many members": ("xlsx", many_members, "20,000 parts", DEFAULT_MB),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_archives_are_refused_with_the_reason(kind: str) -> None:
    source_type, build, reason, max_memory_mb = HOSTILE[kind]
    with pytest.raises(ParseError, match=reason) as refused:
        parse_document(
            build(), source_type=source_type, filename=f"hostile.{source_type}", max_memory_mb=max_memory_mb
        )
    shown = f"{refused.value} {refused.value.__cause__!r}"
    assert "root:" not in shown and "lollol" not in shown


async def test_pptx_parsed_in_the_bounded_child() -> None:
    doc = await parse_bounded(
        pptx_bytes(), source_type="pptx", filename="lecture.pptx", title=None, limits=LIMITS
    )
    assert [section.page_start for section in doc.sections] == [1, 2, 3, 4]
    assert doc.sections[1].path == ("Borrowing",)


async def test_hostile_archive_refused_in_the_bounded_child() -> None:
    with pytest.raises(ParseError, match="entities"):
        await parse_bounded(xxe_docx(), source_type="docx", filename="x.docx", title=None, limits=LIMITS)

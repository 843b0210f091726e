"""PowerPoint (.pptx) into one Markdown section per slide, each carrying its slide number.

python-pptx: the maintained pure-Python reader of the presentation format; it exposes placeholders,
groups, tables and speaker notes as objects, so no office suite or conversion step is needed."""

import io
import zipfile
from collections.abc import Iterable, Iterator

from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.oxml.ns import qn
from pptx.shapes.base import BaseShape
from pptx.slide import Slide
from pptx.text.text import _Paragraph

from workers.parsing.office import markdown_table, no_text
from workers.parsing.structured import Block, Found, StructuredFormat, parser_for
from workers.parsing.types import ParseError

WHAT = "PowerPoint file"
EMPTY_SLIDE = "(no text on this slide)"
NOTES_MARK = "**Speaker notes:**"
# Placeholders whose paragraphs are bullets unless a paragraph says otherwise (PowerPoint's defaults).
_BULLETED = {PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY,
             PP_PLACEHOLDER.VERTICAL_OBJECT}  # fmt: skip


def _read(data: bytes, _archive: zipfile.ZipFile | None, found: Found) -> Iterator[Block]:
    """One Block per slide: path (slide title,) under the deck's title, page = the slide number."""
    presentation = Presentation(io.BytesIO(data))
    found.title = presentation.core_properties.title
    slides = len(presentation.slides)
    if not slides:
        raise ParseError("The PowerPoint file has no slides.")
    found.page_count = slides
    has_text = False
    for number, slide in enumerate(presentation.slides, start=1):
        heading, body = _slide(slide)
        has_text = has_text or bool(heading or body)
        yield Block(path=(heading or f"Slide {number}",), body=body or _empty(heading), page=number)
    if not has_text:
        raise no_text(WHAT)


FORMAT = StructuredFormat(WHAT, _read)
parse_pptx = parser_for(FORMAT)


def _empty(heading: str) -> str:
    # A slide with a title only is a heading (a section divider); one with nothing at all still gets a
    # body, so its section is not dropped as heading-only and its number stays in the document.
    return "" if heading else EMPTY_SLIDE


def _slide(slide: Slide) -> tuple[str, str]:
    """(title, Markdown body with the speaker notes last)."""
    title_shape = slide.shapes.title
    heading = ""
    if title_shape is not None and title_shape.has_text_frame:
        heading = " ".join(title_shape.text_frame.text.split())
    skip = title_shape.element if title_shape is not None else None
    parts = _shapes(slide.shapes, skip)
    notes = _notes(slide)
    if notes:
        parts.append(f"{NOTES_MARK}\n\n{notes}")
    return heading, "\n\n".join(parts)


def _shapes(shapes: Iterable[BaseShape], skip: object) -> list[str]:
    """Markdown per shape in reading order: top to bottom, then left to right (the XML order is the
    z-order, which follows when each shape was drawn, not where it sits)."""
    parts: list[str] = []
    for shape in sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0)):
        if shape.element is skip:
            continue
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            parts.extend(_shapes(shape.shapes, skip))  # type: ignore[attr-defined]
        elif getattr(shape, "has_table", False):
            rows = [[_table_cell(cell) for cell in row.cells] for row in shape.table.rows]  # type: ignore[attr-defined]
            parts.append(markdown_table(rows))
        elif shape.has_text_frame:
            parts.append(_text_frame(shape))
    return [part for part in parts if part.strip()]


def _table_cell(cell: object) -> str:
    # A cell covered by a merge repeats nothing: its text lives in the merge's origin cell.
    return "" if getattr(cell, "is_spanned", False) else str(getattr(cell, "text", ""))


def _text_frame(shape: BaseShape) -> str:
    bulleted = shape.is_placeholder and shape.placeholder_format.type in _BULLETED
    lines: list[str] = []
    for paragraph in shape.text_frame.paragraphs:  # type: ignore[attr-defined]
        # A soft line break inside a paragraph comes back as a vertical tab.
        text = paragraph.text.replace("\v", "\n").strip()
        if not text:
            continue
        if _is_bullet(paragraph, bulleted):
            lines.append("  " * paragraph.level + "- " + " ".join(text.split()))
        else:
            lines.append(text)
    return "\n".join(lines)


def _is_bullet(paragraph: _Paragraph, bulleted: bool) -> bool:
    """The paragraph's own bullet setting, else its placeholder's default. Bullets a layout or master
    switches off are not looked up: a body paragraph is taken for a bullet then."""
    properties = paragraph._p.pPr
    if properties is not None:
        if properties.find(qn("a:buNone")) is not None:
            return False
        if properties.find(qn("a:buChar")) is not None or properties.find(qn("a:buAutoNum")) is not None:
            return True
    return bulleted


def _notes(slide: Slide) -> str:
    if not slide.has_notes_slide:  # reading notes_slide would create an empty one
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.replace("\v", "\n").strip() if frame is not None else ""

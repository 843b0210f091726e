"""One slide of a .pptx laid out for the viewer (core/text/slide_layout.py): text boxes (the slide's own,
its placeholders at the positions their layout gives them), tables as rows of text and pictures, each
placed as fractions of the slide, with the paragraphs' font sizes resolved as PowerPoint does (the run's,
the paragraph's, the layout's and the master's list styles, the master's text styles). Drawn by the web
app: a layout, not a rendering of every effect (no theme backgrounds, charts or SmartArt drawn).

Runs in the bounded child (workers/parsing/child.py, task "slide_layout"): a deck may be hostile."""

import base64
import io
from collections.abc import Iterator
from dataclasses import dataclass

from lxml.etree import _Element
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.oxml.ns import qn
from pptx.shapes.base import BaseShape
from pptx.slide import Slide

from core.text.slide_layout import SlideLayout, SlideParagraph, SlideShape
from workers.parsing.page_words import fraction
from workers.parsing.types import ParseError

SHOWN_PICTURES = frozenset({"image/png", "image/jpeg", "image/gif"})  # what every browser draws
PICTURE_MAX_BYTES = 2 * 1024 * 1024  # larger pictures are framed, not sent
PICTURES_MAX_BYTES = 6 * 1024 * 1024  # all of one slide's pictures
DEFAULT_PT = 18.0  # PowerPoint's size where nothing says one
_TITLES = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE}
_BODIES = {PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY,
           PP_PLACEHOLDER.VERTICAL_OBJECT, PP_PLACEHOLDER.SUBTITLE}  # fmt: skip


@dataclass(frozen=True)
class _Frame:
    """A group's mapping of its children's coordinates onto the slide (EMU)."""

    dx: float = 0.0
    dy: float = 0.0
    sx: float = 1.0
    sy: float = 1.0

    def place(self, x: float, y: float) -> tuple[float, float]:
        return self.dx + x * self.sx, self.dy + y * self.sy


def read_slide_layout(data: bytes, *, slide: int) -> SlideLayout:
    deck = Presentation(io.BytesIO(data))
    count = len(deck.slides)
    if not 1 <= slide <= count:
        raise ParseError(f"This deck has no slide {slide} (it has {count:,}).")
    width, height = float(deck.slide_width or 9144000), float(deck.slide_height or 6858000)
    shown = deck.slides[slide - 1]
    budget = [PICTURES_MAX_BYTES]
    shapes = [
        laid
        for shape, frame in _shapes(shown.shapes, _Frame())
        if (laid := _lay(shape, frame, shown, width, height, budget)) is not None
    ]
    return SlideLayout(slide=slide, slide_count=count, aspect=width / height, shapes=shapes)


def _shapes(shapes: object, frame: _Frame) -> Iterator[tuple[BaseShape, _Frame]]:
    for shape in shapes:  # type: ignore[attr-defined]
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes, _group_frame(shape, frame))
        else:
            yield shape, frame


def _group_frame(group: BaseShape, outer: _Frame) -> _Frame:
    xfrm = group._element.find(qn("p:grpSpPr")).find(qn("a:xfrm"))  # type: ignore[attr-defined]
    off, ext = xfrm.find(qn("a:off")), xfrm.find(qn("a:ext"))
    ch_off, ch_ext = xfrm.find(qn("a:chOff")), xfrm.find(qn("a:chExt"))
    if None in (off, ext, ch_off, ch_ext):
        return outer
    sx = int(ext.get("cx")) / max(1, int(ch_ext.get("cx")))
    sy = int(ext.get("cy")) / max(1, int(ch_ext.get("cy")))
    x, y = outer.place(
        int(off.get("x")) - int(ch_off.get("x")) * sx, int(off.get("y")) - int(ch_off.get("y")) * sy
    )
    return _Frame(dx=x, dy=y, sx=outer.sx * sx, sy=outer.sy * sy)


def _lay(
    shape: BaseShape, frame: _Frame, slide: Slide, width: float, height: float, budget: list[int]
) -> SlideShape | None:
    if None in (shape.left, shape.top, shape.width, shape.height):
        return None
    left, top = frame.place(float(shape.left), float(shape.top))
    right, bottom = frame.place(float(shape.left + shape.width), float(shape.top + shape.height))
    box = {"x0": fraction(left, width), "y0": fraction(top, height), "x1": fraction(right, width),
           "y1": fraction(bottom, height)}  # fmt: skip
    if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
        return _picture(shape, box, budget)
    if getattr(shape, "has_table", False) and shape.has_table:  # type: ignore[attr-defined]
        rows = [" | ".join(cell.text for cell in row.cells) for row in shape.table.rows]  # type: ignore[attr-defined]
        size = 14 / (width / 12700)
        paragraphs = [
            SlideParagraph(text=row, size=size, bold=i == 0, level=0, bullet=False)
            for i, row in enumerate(rows)
        ]
        return SlideShape(kind="text", paragraphs=paragraphs, **box)
    if not shape.has_text_frame or not shape.text_frame.text.strip():  # type: ignore[attr-defined]
        return None
    kind = _placeholder_kind(shape)
    paragraphs = [
        SlideParagraph(
            text=paragraph.text,
            size=_size_pt(paragraph, shape, slide, kind)
            / (width / 12700),  # points over the slide's width in points
            bold=any(bool(run.font.bold) for run in paragraph.runs) or bool(paragraph.font.bold),
            level=int(paragraph.level),
            bullet=kind == "body" and bool(paragraph.text.strip()),
        )
        for paragraph in shape.text_frame.paragraphs  # type: ignore[attr-defined]
    ]
    return SlideShape(kind="title" if kind == "title" else "text", paragraphs=paragraphs, **box)


def _picture(shape: BaseShape, box: dict[str, float], budget: list[int]) -> SlideShape:
    try:
        image = shape.image  # type: ignore[attr-defined]
        media, blob = str(image.content_type), bytes(image.blob)
    except (KeyError, AttributeError, ValueError):  # a linked or broken picture: its frame only
        return SlideShape(kind="picture", **box)
    if media not in SHOWN_PICTURES or len(blob) > PICTURE_MAX_BYTES or len(blob) > budget[0]:
        return SlideShape(kind="picture", **box)
    budget[0] -= len(blob)
    return SlideShape(kind="picture", media_type=media, data=base64.b64encode(blob).decode(), **box)


def _placeholder_kind(shape: BaseShape) -> str:
    if not shape.is_placeholder:
        return "other"
    kind = shape.placeholder_format.type  # type: ignore[attr-defined]
    return "title" if kind in _TITLES else "body" if kind in _BODIES else "other"


def _size_pt(paragraph: object, shape: BaseShape, slide: Slide, kind: str) -> float:
    """The first size that says one: a run's, the paragraph's, then the list styles of the shape, of the
    layout's and the master's placeholder it inherits from, then the master's text style for its kind."""
    for run in paragraph.runs:  # type: ignore[attr-defined]
        if run.font.size is not None:
            return float(run.font.size.pt)
    if paragraph.font.size is not None:  # type: ignore[attr-defined]
        return float(paragraph.font.size.pt)  # type: ignore[attr-defined]
    level = int(paragraph.level) + 1  # type: ignore[attr-defined]
    for element in _inherited(shape):
        size = _list_size(element.find(qn("p:txBody")), level)
        if size:
            return size
    master = slide.slide_layout.slide_master._element
    style = {"title": "p:titleStyle", "body": "p:bodyStyle"}.get(kind, "p:otherStyle")
    styles = master.find(qn("p:txStyles"))
    return (
        _list_size(styles.find(qn(style)), level, listed=False) if styles is not None else None
    ) or DEFAULT_PT


def _inherited(shape: BaseShape) -> Iterator[_Element]:
    yield shape._element
    if not shape.is_placeholder:
        return
    base = getattr(shape, "_base_placeholder", None)
    while base is not None:
        yield base._element
        base = getattr(base, "_base_placeholder", None)


def _list_size(holder: _Element | None, level: int, *, listed: bool = True) -> float | None:
    """`holder`'s a:lstStyle (or, not `listed`, holder itself: a master text style) at `level`, in points."""
    if holder is None:
        return None
    styles = holder.find(qn("a:lstStyle")) if listed else holder
    if styles is None:
        return None
    level_style = styles.find(qn(f"a:lvl{level}pPr"))
    run_style = level_style.find(qn("a:defRPr")) if level_style is not None else None
    size = run_style.get("sz") if run_style is not None else None
    return int(size) / 100 if size and size.isdigit() else None

"""One slide of a deck as it is laid out (issue 42: a citation opens a deck at its slide, drawn): its text
boxes with their paragraphs' sizes and its pictures, each placed as fractions of the slide. Read by the
parser's child (workers/parsing/slide_layout.py), answered by the viewer's API, drawn by the web app."""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SlideParagraph:
    text: str
    size: float  # the font size as a fraction of the slide's width (the app scales it with the slide)
    bold: bool
    level: int  # 0 for the outermost; a bulleted list's depth
    bullet: bool


@dataclass(frozen=True, slots=True)
class SlideShape:
    x0: float  # fractions of the slide (0..1), origin top left
    y0: float
    x1: float
    y1: float
    kind: str  # "text", "title" or "picture"
    paragraphs: list[SlideParagraph] = field(default_factory=list)
    media_type: str | None = None  # a picture's, when the browser can show it
    data: str | None = None  # a picture's bytes, base64


@dataclass(frozen=True, slots=True)
class SlideLayout:
    slide: int  # 1-based
    slide_count: int
    aspect: float  # width / height
    shapes: list[SlideShape]


def layout_from_json(fields: dict[str, Any]) -> SlideLayout:
    """A layout as the child answered it (JSON), typed again."""
    shapes = [
        SlideShape(
            x0=float(s["x0"]), y0=float(s["y0"]), x1=float(s["x1"]), y1=float(s["y1"]), kind=str(s["kind"]),
            paragraphs=[
                SlideParagraph(
                    text=str(p["text"]), size=float(p["size"]), bold=bool(p["bold"]), level=int(p["level"]),
                    bullet=bool(p["bullet"]),
                )
                for p in s["paragraphs"]
            ],
            media_type=None if s["media_type"] is None else str(s["media_type"]),
            data=None if s["data"] is None else str(s["data"]),
        )
        for s in fields["shapes"]
    ]  # fmt: skip
    return SlideLayout(
        slide=int(fields["slide"]), slide_count=int(fields["slide_count"]), aspect=float(fields["aspect"]),
        shapes=shapes,
    )  # fmt: skip

"""What a citation opens: the stored version it names, with the passage and the text around it."""

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from core.store.content.refs import Location


class CitedPassage(BaseModel):
    char_start: int = Field(description="offsets in the parsed text of this version")
    char_end: int
    # None: not known any more (a PDF's older version, whose chunks a newer one replaced): the web app
    # highlights with the citation's own text.
    text: str | None
    page_start: int | None = Field(description="1-based page (PDF, scan) or slide (deck)")
    page_end: int | None


class PassageContext(BaseModel):
    """The parsed text shown around the passage (formats shown as text): its section(s), or the slide."""

    char_start: int
    char_end: int
    text: str = Field(description="Markdown for every format but plain text")
    path: list[str] = Field(description="the section's headings, outermost first")
    page: int | None = Field(description="the slide shown (decks)")


class VersionSpot(BaseModel):
    document_id: UUID
    version: int
    title: str
    filename: str
    source_type: str = Field(description="of this version's bytes (a newer version may be of another type)")
    location: Location | None
    media_type: str = Field(description="the Content-Type .../file answers with")
    shown_as: Literal["pdf", "image", "text"] = Field(
        description="pdf, image: the app draws the page from .../file; text: `context` is shown"
    )
    page_count: int | None
    passage: CitedPassage | None
    context: PassageContext | None


class HighlightBox(BaseModel):
    """A line's run of the passage, as fractions of the page as shown (0..1, origin top left)."""

    x0: float
    y0: float
    x1: float
    y1: float


class PageHighlightOut(BaseModel):
    page: int
    source: Literal["text", "ocr"] = Field(description="the page's words: from its text layer, or by OCR")
    boxes: list[HighlightBox] = Field(description="empty: the passage was not found on this page")
    matched_words: int = Field(description="of the passage's words, how many were found on this page")
    passage_words: int


class SlideParagraphOut(BaseModel):
    text: str
    size: float = Field(description="the font size as a fraction of the slide's width")
    bold: bool
    level: int
    bullet: bool


class SlideShapeOut(BaseModel):
    x0: float = Field(description="fractions of the slide (0..1), origin top left")
    y0: float
    x1: float
    y1: float
    kind: Literal["title", "text", "picture"]
    paragraphs: list[SlideParagraphOut]
    media_type: str | None = Field(description="a picture's, when it is sent (PNG, JPEG, GIF)")
    data: str | None = Field(description="a picture's bytes, base64; null: its frame only")


class SlideLayoutOut(BaseModel):
    slide: int
    slide_count: int
    aspect: float = Field(description="the slide's width over its height")
    shapes: list[SlideShapeOut]

"""The words of one page of a PDF or page image with their boxes (issue 42): read by the parser's child
(workers/parsing/page_words.py), kept by the store (core/store/content/page_words.py), matched to a cited
passage by the viewer's API (backend/documents/page_highlight.py)."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PageWord:
    x0: float  # the box as fractions of the page as shown (0..1, its rotation applied)
    y0: float
    x1: float
    y1: float
    text: str
    line: int  # the words of one line share it


@dataclass(frozen=True, slots=True)
class PageWords:
    page: int  # 1-based
    source: str  # "text" (the PDF's text layer) or "ocr"
    words: list[PageWord]


def words_from_json(items: list[dict[str, Any]]) -> list[PageWord]:
    """Words as stored (jsonb) or as the child answered (JSON): typed again on the way in."""
    return [_word(item) for item in items]


def _word(item: dict[str, Any]) -> PageWord:
    return PageWord(
        x0=float(item["x0"]), y0=float(item["y0"]), x1=float(item["x1"]), y1=float(item["y1"]),
        text=str(item["text"]), line=int(item["line"]),
    )  # fmt: skip

"""Slide decks made in a test with python-pptx (the viewer's, the parser's and the API's tests)."""

import io
from typing import Any

from pptx import Presentation


def saved(deck: Any) -> bytes:
    """A python-pptx Presentation's .pptx bytes."""
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def titled_deck(slides: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> bytes:
    """A deck of "title and content" slides, one per (title, body)."""
    deck = Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    return saved(deck)

"""A deck's slide laid out for the viewer (workers/parsing/slide_layout.py, issue 42): placeholders where
their layout puts them with the master's sizes, a run's own size when it has one, pictures with their
bytes (a large one framed only), a group's children placed on the slide, and the bounded child answering
the same; a slide the deck does not have is refused."""

import base64
import io
import os

import pymupdf
import pytest
from PIL import Image
from pptx import Presentation
from pptx.util import Inches, Pt

from benchmarks.formats.scans import THINK_PYTHON
from core.settings.parsing import ParseSettings
from tests.decks import saved
from workers.parsing.bounded import slide_layout_bounded
from workers.parsing.slide_layout import read_slide_layout
from workers.parsing.types import ParseError

LIMITS = ParseSettings(max_pages=2000, max_chars=20_000_000, timeout_s=120, max_memory_mb=2048)
WIDTH_PT = 720  # python-pptx's default deck: 10 x 7.5 inches


def png(dpi: int) -> bytes:
    with pymupdf.open(THINK_PYTHON) as book:
        return book[26].get_pixmap(dpi=dpi).tobytes("png")


def noise_png() -> bytes:
    """A picture past PICTURE_MAX_BYTES: random pixels do not compress."""
    buffer = io.BytesIO()
    Image.frombytes("RGB", (1000, 1000), os.urandom(3_000_000)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def deck() -> bytes:
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    first.shapes.title.text = "Posse"
    first.placeholders[1].text = "Cada valor tem um dono."
    second = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    box = second.shapes.add_textbox(Inches(1), Inches(5), Inches(4), Inches(1))
    run = box.text_frame.paragraphs[0].add_run()
    run.text, run.font.size, run.font.bold = "Quando o dono sai do escopo", Pt(20), True
    second.shapes.add_picture(io.BytesIO(png(40)), Inches(6), Inches(1), Inches(3), Inches(4))
    second.shapes.add_picture(io.BytesIO(noise_png()), Inches(0), Inches(0), Inches(1), Inches(1))
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(2), Inches(1)).text_frame.text = "Agrupado"
    return saved(deck)


def test_placeholders_are_where_their_layout_puts_them_at_the_masters_sizes(deck: bytes) -> None:
    layout = read_slide_layout(deck, slide=1)
    assert (layout.slide, layout.slide_count, layout.aspect) == (1, 2, pytest.approx(4 / 3))
    title, body = layout.shapes
    assert title.kind == "title" and [p.text for p in title.paragraphs] == ["Posse"]
    assert (
        body.kind == "text"
        and body.paragraphs[0].bullet
        and body.paragraphs[0].text == "Cada valor tem um dono."
    )
    assert (
        title.y1 <= body.y0 and 0 < title.x0 < 0.1 and 0.9 < title.x1 < 1
    )  # above it, the width of the slide
    # The default master's title style is 44 pt and its first body level 32 pt.
    assert title.paragraphs[0].size == pytest.approx(44 / WIDTH_PT)
    assert body.paragraphs[0].size == pytest.approx(32 / WIDTH_PT)


def test_a_runs_size_pictures_and_a_groups_children(deck: bytes) -> None:
    shapes = read_slide_layout(deck, slide=2).shapes
    (text,) = [s for s in shapes if s.paragraphs and s.paragraphs[0].text.startswith("Quando")]
    assert text.paragraphs[0].size == pytest.approx(20 / WIDTH_PT) and text.paragraphs[0].bold
    assert (text.x0, text.y0) == (pytest.approx(0.1), pytest.approx(5 / 7.5, abs=1e-4))
    small, large = sorted((s for s in shapes if s.kind == "picture"), key=lambda s: -s.x0)
    assert small.media_type == "image/png" and base64.b64decode(small.data or "") == png(40)
    assert (small.x0, small.y0) == (pytest.approx(0.6), pytest.approx(1 / 7.5, abs=1e-4))
    assert large.media_type is None and large.data is None  # past PICTURE_MAX_BYTES: framed, not sent
    (grouped,) = [s for s in shapes if s.paragraphs and s.paragraphs[0].text == "Agrupado"]
    assert (grouped.x0, grouped.y0) == (pytest.approx(0.1), pytest.approx(1 / 7.5, abs=1e-4))


def test_a_slide_the_deck_does_not_have_is_refused(deck: bytes) -> None:
    with pytest.raises(ParseError, match="no slide 3"):
        read_slide_layout(deck, slide=3)


async def test_the_bounded_child_lays_it_out_the_same(deck: bytes) -> None:
    assert await slide_layout_bounded(
        deck, filename="aula.pptx", slide=2, limits=LIMITS
    ) == read_slide_layout(deck, slide=2)
    with pytest.raises(ParseError):
        await slide_layout_bounded(b"not a deck", filename="aula.pptx", slide=1, limits=LIMITS)

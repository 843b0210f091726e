"""An Anki deck (.apkg, via genanki) of a project's approved items: a card per flashcard (front/back)
and per question (a multiple-choice question shows its options on the front; the back has the answer
and the explanation), each with its source reference.

Deck and model ids are derived from the project id and note guids from the item ids, so exporting
again and importing into Anki updates the same deck and notes instead of adding copies."""

import hashlib
import html
import io
from collections.abc import Sequence
from typing import Any

import genanki

from core.exports.bank import source_reference
from core.store.study.exports import ApprovedItem

_CSS = """.card { font-family: sans-serif; font-size: 18px; text-align: left; }
.options { margin-top: .5em; } .explanation { margin-top: .8em; color: #444; }
.source { margin-top: 1em; font-size: 13px; color: #777; }"""
_TYPE_LABEL = {
    "flashcard": "",
    "multiple_choice": "Multiple choice",
    "short_answer": "Short answer",
    "application": "Application",
}


def stable_id(project_id: Any, what: str) -> int:
    """An Anki id in genanki's recommended range [2^30, 2^31), the same for a project every time."""
    digest = hashlib.sha256(f"studyai:{project_id}:{what}".encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def _text(value: str) -> str:
    """Model-written text as HTML text: escaped (Anki renders fields as HTML), newlines kept."""
    return html.escape(value).replace("\n", "<br>")


def _model(project_id: Any) -> genanki.Model:
    return genanki.Model(
        stable_id(project_id, "model"),
        "studyAI item",
        fields=[{"name": "Front"}, {"name": "Back"}, {"name": "Source"}],
        templates=[
            {
                "name": "Card",
                "qfmt": "{{Front}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Back}}<div class="source">{{Source}}</div>',
            }
        ],
        css=_CSS,
    )


def card_fields(item: ApprovedItem) -> tuple[str, str, str]:
    """Front, back and source of one item, as HTML."""
    label = _TYPE_LABEL[item.type]
    front = (f'<div class="type"><i>{label}</i></div>' if label else "") + _text(item.question)
    options = item.options
    if options:
        letters = "ABCDEFGH"
        items = "".join(f"<li>{letters[i]}. {_text(option)}</li>" for i, option in enumerate(options))
        front += f'<ol class="options" style="list-style: none">{items}</ol>'
    back = _text(item.answer)
    if options:
        back = f"{'ABCDEFGH'[options.index(item.answer)]}. {back}"
    if item.explanation:
        back += f'<div class="explanation">{_text(item.explanation)}</div>'
    return front, back, "Source: " + _text(source_reference(item))


def build_package(project_id: Any, deck_name: str, items: Sequence[ApprovedItem]) -> bytes:
    """The .apkg file's bytes (a zip holding the SQLite collection.anki2)."""
    model = _model(project_id)
    deck = genanki.Deck(stable_id(project_id, "deck"), deck_name)
    for item in items:
        deck.add_note(
            genanki.Note(
                model=model,
                fields=list(card_fields(item)),
                guid=genanki.guid_for("studyai", str(item.id)),
                tags=[item.type, item.difficulty],
            )
        )
    out = io.BytesIO()
    genanki.Package(deck).write_to_file(out)
    return out.getvalue()

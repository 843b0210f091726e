"""Exports through the API on the real stack: the Anki deck (.apkg opened as the zip of an SQLite
collection it is), the approved bank as CSV and JSON, and a finished note as Markdown; only approved
items, only for members."""

import csv
import io
import json
import sqlite3
import subprocess
import uuid
import zipfile
from pathlib import Path
from typing import Any

import psycopg
import pytest

from core.exports.anki import stable_id
from core.store.content import documents
from core.store.runs import notes
from tests.agents.helpers import ScriptedChat
from tests.backend.conftest import Api
from tests.backend.test_curation_api import Class, generate, new_class, review
from tests.backend.test_questions_api import question_reply
from tests.conftest import UserFactory


@pytest.fixture(scope="module")
async def course(api: Api, make_user: UserFactory, worker: subprocess.Popen[bytes]) -> Class:
    return await new_class(api, make_user, "Rust — ownership")


@pytest.fixture(scope="module")
async def items(api: Api, course: Class) -> dict[str, dict[str, Any]]:
    """A multiple-choice question and a flashcard approved; a short-answer question left pending."""
    response = await generate(
        api,
        course,
        course.owner,
        [
            question_reply("What happens to a String assigned to another variable?"),
            question_reply('=HYPERLINK("http://evil") How many mutable references may exist?'),
            question_reply("Clone"),
        ],
        types=["multiple_choice", "short_answer", "flashcard"],
    )
    assert response.status_code == 201, response.text
    made = {q["type"]: q for q in response.json()["questions"]}
    for kind in ("multiple_choice", "flashcard"):
        assert (await review(api, course, course.owner, made[kind]["id"], "approve")).status_code == 200
    return made


def open_deck(content: bytes, tmp_path: Path) -> sqlite3.Connection:
    with zipfile.ZipFile(io.BytesIO(content)) as package:
        assert "collection.anki2" in package.namelist()
        path = tmp_path / "collection.anki2"
        path.write_bytes(package.read("collection.anki2"))
    return sqlite3.connect(path)


async def test_anki_deck_holds_the_approved_items_with_their_sources(
    api: Api, course: Class, items: dict[str, dict], tmp_path: Path
) -> None:
    response = await api.http.get(f"/projects/{course.id}/exports/anki", headers=course.owner)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/octet-stream"
    assert 'filename="Rust-ownership.apkg"' in response.headers["content-disposition"]
    deck = open_deck(response.content, tmp_path)
    notes_rows = deck.execute("SELECT guid, flds, tags FROM notes ORDER BY id").fetchall()
    assert len(notes_rows) == 2  # the pending short-answer question is not exported
    fields = [row[1].split("\x1f") for row in notes_rows]
    mc, card = items["multiple_choice"], items["flashcard"]
    by_front = {front: (back, source) for front, back, source in fields}
    [mc_front] = [front for front in by_front if "Multiple choice" in front]
    assert all(option in mc_front for option in mc["options"])  # the options on the front
    mc_back = by_front[mc_front][0]
    assert mc["answer"] in mc_back and mc["explanation"] in mc_back
    [card_front] = [front for front in by_front if front == card["question"]]
    assert by_front[card_front][0].startswith(card["answer"])
    title = (
        await api.http.get(f"/projects/{course.id}/documents/{course.document}", headers=course.owner)
    ).json()["title"]
    for item, front in ((mc, mc_front), (card, card_front)):  # document title and section path on each card
        where = " › ".join(dict.fromkeys([title, *item["section_path"]]))
        assert by_front[front][1] == f"Source: {where}"
        assert "Ownership" in item["section_path"] and len(item["section_path"]) == 2
    assert {row[2].strip() for row in notes_rows} == {"multiple_choice easy", "flashcard easy"}

    decks = json.loads(deck.execute("SELECT decks FROM col").fetchone()[0])
    assert str(stable_id(course.id, "deck")) in decks
    assert decks[str(stable_id(course.id, "deck"))]["name"] == "Rust — ownership"
    models = json.loads(deck.execute("SELECT models FROM col").fetchone()[0])
    assert list(models) == [str(stable_id(course.id, "model"))]
    # Exported again: the same deck and notes (Anki updates them instead of adding copies).
    again = await api.http.get(f"/projects/{course.id}/exports/anki", headers=course.owner)
    (tmp_path / "again").mkdir()
    second = open_deck(again.content, tmp_path / "again")
    assert sorted(r[0] for r in second.execute("SELECT guid FROM notes")) == sorted(r[0] for r in notes_rows)


async def test_question_bank_as_json_and_csv(api: Api, course: Class, items: dict[str, dict]) -> None:
    # A formula in an approved item stays text in a spreadsheet.
    short = items["short_answer"]
    assert (await review(api, course, course.editor, short["id"], "approve")).status_code == 200
    response = await api.http.get(f"/projects/{course.id}/exports/questions", headers=course.owner)
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    records = response.json()
    assert [r["id"] for r in records] == [
        items[t]["id"] for t in ("multiple_choice", "short_answer", "flashcard")
    ]
    assert records[0]["options"] == items["multiple_choice"]["options"]
    assert all(r["answer"] and r["document_id"] == course.document and r["document_title"] for r in records)
    assert all(r["source"].endswith(" › ".join(r["section_path"][1:])) for r in records)

    response = await api.http.get(
        f"/projects/{course.id}/exports/questions", params={"format": "csv"}, headers=course.owner
    )
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    assert rows[1]["question"].startswith("'=HYPERLINK")
    assert rows[0]["options"] == " | ".join(records[0]["options"])
    bad = await api.http.get(
        f"/projects/{course.id}/exports/questions", params={"format": "xml"}, headers=course.owner
    )
    assert bad.status_code == 422
    await review(api, course, course.owner, short["id"], "reject")


async def test_members_export_and_strangers_see_nothing(
    api: Api, course: Class, items: dict[str, dict], tmp_path: Path
) -> None:
    base = f"/projects/{course.id}"
    for path in ("/exports/anki", "/exports/questions", f"/notes/note:{uuid.uuid4()}/markdown"):
        assert (await api.http.get(base + path, headers=course.stranger)).status_code == 404
    # Where attempts are limited (3 by default) a question's answer is the bank's secret: students get
    # the flashcards only; their teachers everything approved.
    student = (await api.http.get(f"{base}/exports/questions", headers=course.student)).json()
    assert [r["type"] for r in student] == ["flashcard"]
    deck = open_deck((await api.http.get(f"{base}/exports/anki", headers=course.student)).content, tmp_path)
    assert deck.execute("SELECT count(*) FROM notes").fetchone()[0] == 1
    teacher = (await api.http.get(f"{base}/exports/questions", headers=course.editor)).json()
    assert [r["type"] for r in teacher] == ["multiple_choice", "flashcard"]
    unlimited = {"max_attempts_per_question": None}
    assert (await api.http.patch(base, json=unlimited, headers=course.owner)).status_code == 200
    student = (await api.http.get(f"{base}/exports/questions", headers=course.student)).json()
    assert [r["type"] for r in student] == ["multiple_choice", "flashcard"]
    await api.http.patch(base, json={"max_attempts_per_question": 3}, headers=course.owner)


async def test_finished_note_as_markdown(
    api: Api, course: Class, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    scope = {"project_id": course.id, "user_id": course.owner.id}
    job_id = notes.new_note_job_id()
    assert await notes.create_note_job(db, **scope, job_id=job_id, request={"topic": "moves", "kind": "faq"})
    path = f"/projects/{course.id}/notes/{job_id}/markdown"
    assert (await api.http.get(path, headers=course.student)).status_code == 409  # not written yet
    markdown = (
        "# FAQ: moves\n\n## Moves\n\n**What is a move?**\n\nOwnership passes on [^1].\n\n## References\n\n"
    )
    markdown += "[^1]: ownership, Ownership › Moves\n"
    document = await documents.create_document(
        db, **scope, title="FAQ: moves", filename="faq-moves.md", source_type="markdown",
        kind="generated", content=markdown.encode(), content_hash="faq",
    )  # fmt: skip
    assert document is not None
    await notes.finish_note_job(
        db, project_id=course.id, job_id=job_id, document_id=document.id, result={"title": "FAQ: moves"}
    )
    response = await api.http.get(path, headers=course.student)
    assert response.status_code == 200 and response.text == markdown
    assert response.headers["content-type"].startswith("text/markdown")
    assert 'filename="FAQ-moves.md"' in response.headers["content-disposition"]
    unknown = f"/projects/{course.id}/notes/note:{uuid.uuid4()}/markdown"
    assert (await api.http.get(unknown, headers=course.owner)).status_code == 404
    await documents.delete_document(db, **scope, document_id=document.id)
    assert (await api.http.get(path, headers=course.owner)).status_code == 404
    with api.model(ScriptedChat(script=[])):  # no model involved in any export
        assert (
            await api.http.get(f"/projects/{course.id}/exports/anki", headers=course.owner)
        ).status_code == 200

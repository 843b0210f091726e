"""Course formats end to end (issue 29): a lecture deck uploaded through the API is indexed by the real
worker slide by slide, and a question about one slide's speaker notes is answered citing the deck and
that slide; a Word handout's headings are its sections."""

import io
import json
import subprocess
from typing import Any

import httpx
import pytest
from docx import Document as WordDocument
from langchain_core.messages import AIMessage
from pptx import Presentation

from tests.backend.test_qa_api import chat_model
from tests.chat_fakes import ListChat
from tests.conftest import Caller, UserFactory, create_project, upload, wait_for_job

MNEMONIC = "Mnemonic for the borrowing rules: one writer or many readers, never both."
SLIDES = [
    ("Ownership", "Each value has one owner.", "Remind the class that moves invalidate the old binding."),
    ("Borrowing", "References borrow without owning.", MNEMONIC),
    ("Lifetimes", "Lifetimes name how long references live.", "Skip the elision rules if time is short."),
]


def lecture_deck() -> bytes:
    deck = Presentation()
    deck.core_properties.title = "Rust lecture 4"
    for title, body, notes in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    deck.slides.add_slide(deck.slide_layouts[6])  # a slide with no text keeps its number
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def handout() -> bytes:
    document = WordDocument()
    document.add_heading("Week 4 handout", level=1)
    document.add_heading("Borrowing exercises", level=2)
    document.add_paragraph("Write a function that takes a reference to a String and returns its length.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
async def course(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> tuple[Caller, str, dict[str, Any]]:
    owner = await make_user("formats-owner")
    project_id = await create_project(client, owner, name="formats", language="en")
    documents = {}
    for name, content in (("lecture4.pptx", lecture_deck()), ("handout.docx", handout())):
        response = await upload(client, owner, project_id, name, content)
        assert response.status_code == 202, response.text
        job = await wait_for_job(client, owner, project_id, response.json()["job_id"])
        assert job["status"] == "succeeded", job
        document_url = f"/projects/{project_id}/documents/{response.json()['document_id']}"
        documents[name] = (await client.get(document_url, headers=owner)).json()
    return owner, project_id, documents


async def test_a_deck_is_indexed_slide_by_slide(
    client: httpx.AsyncClient, course: tuple[Caller, str, Any]
) -> None:
    owner, project_id, documents = course
    deck = documents["lecture4.pptx"]
    assert (deck["source_type"], deck["title"], deck["page_count"]) == ("pptx", "lecture4", 4)
    chunks = (await client.get(f"/projects/{project_id}/documents/{deck['id']}/chunks", headers=owner)).json()
    assert {chunk["page_start"] for chunk in chunks} <= {1, 2, 3, 4}
    notes = next(chunk for chunk in chunks if "one writer or many readers" in chunk["text"])
    assert (
        notes["page_start"] == 2 and "Borrowing" in notes["section_path"] and "Speaker notes" in notes["text"]
    )
    docx = documents["handout.docx"]
    docx_chunks = (
        await client.get(f"/projects/{project_id}/documents/{docx['id']}/chunks", headers=owner)
    ).json()
    assert (
        docx_chunks[0]["section_path"][-1] == "Borrowing exercises" and docx_chunks[0]["page_start"] is None
    )


async def test_a_question_on_speaker_notes_cites_the_deck_and_the_slide(
    client: httpx.AsyncClient, course: tuple[Caller, str, Any]
) -> None:
    owner, project_id, _ = course
    question = "What mnemonic does the lecture give for the borrowing rules?"
    found = await client.post(
        f"/projects/{project_id}/search", json={"query": question, "profile": "qa"}, headers=owner
    )
    top = found.json()["results"][0]
    assert "one writer or many readers" in top["text"]  # retrieval finds the notes, not a stub
    assert (top["page_start"], top["location"]) == (2, "slide")
    reply = {"answer": "One writer or many readers.", "has_answer": True, "used_chunk_ids": [top["chunk_id"]]}
    answer = AIMessage(content=json.dumps(reply))
    with chat_model(client, ListChat(responses=[answer])):
        response = await client.post(f"/projects/{project_id}/qa", json={"question": question}, headers=owner)
    assert response.status_code == 200, response.text
    (citation,) = response.json()["citations"]
    assert citation["document_title"] == "lecture4"
    assert (citation["page_start"], citation["page_end"], citation["location"]) == (2, 2, "slide")

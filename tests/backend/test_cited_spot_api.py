"""What a citation opens (issue 42), over HTTP: a citation names the stored version of its document and the
characters it read; any member, a viewer too, reads that version's exact bytes and the passage in it, and
a newer upload does not move an old citation. On a scanned page the passage's boxes come from the page's
words read by OCR (once for a whole class) and land where the page prints it. Anyone else gets 404,
whatever the ids they try."""

import asyncio
import json
import uuid
from typing import Any

import httpx
import pymupdf
import pytest
from langchain_core.messages import AIMessage

from backend.documents import page_highlight
from benchmarks.formats.scans import THINK_PYTHON, scanned_pdf
from tests.backend.test_qa_api import chat_model
from tests.chat_fakes import ListChat
from tests.conftest import Caller, UserFactory, class_project, create_project, upload, wait_for_job
from tests.decks import titled_deck

NOTES_V1 = """# Ownership

## The rules

Each value in Rust has an owner. There can only be one owner at a time. When the owner goes out of
scope, the value will be dropped.

## Moves

Assigning a String to another variable moves it: the first variable is no longer valid.
"""
NOTES_V2 = """# Ownership, revised

## Borrowing

References borrow a value without taking ownership: many readers or one writer, never both.
"""
PAGE = """<!DOCTYPE html><html><head><title>Slices</title><script>alert(1)</script></head><body>
<h1>Slices</h1><p>A slice is a reference to a contiguous run of elements in a collection.</p></body></html>
"""
QUESTION = "What happens to a value when its owner goes out of scope?"
DEBUGGING_PAGE = 26  # 0-based: Think Python's "1.7 Debugging", then its next two pages
BUGS = (
    "For whimsical reasons, programming errors are called bugs and the process of tracking them down is "
    "called debugging."
)


def pdf_excerpt() -> bytes:
    """Think Python's pages 21-23 (chapter 1): a real PDF of three pages."""
    with pymupdf.open(THINK_PYTHON) as book, pymupdf.open() as out:
        out.insert_pdf(book, from_page=20, to_page=22)
        return out.tobytes()


async def indexed(
    client: httpx.AsyncClient, owner: Caller, project_id: str, name: str, content: bytes
) -> dict[str, Any]:
    response = await upload(client, owner, project_id, name, content)
    assert response.status_code == 202, response.text
    job = await wait_for_job(client, owner, project_id, response.json()["job_id"])
    assert job["status"] == "succeeded", job
    return response.json()


def deck_bytes() -> bytes:
    return titled_deck((("Ownership", "Each value has an owner."), ("Moves", "Assigning a String moves it.")))


def version_url(project_id: str, document_id: str, version: int, what: str) -> str:
    return f"/projects/{project_id}/documents/{document_id}/versions/{version}/{what}"


@pytest.fixture(scope="module")
async def cited(client: httpx.AsyncClient, make_user: UserFactory, worker: Any) -> dict[str, Any]:
    """A class project with notes (version 1) cited by a QA answer, then replaced by a version 2; a web
    page and a PDF beside them; and an outsider with a project of their own."""
    project_id, owner, editor, alice, bob = await class_project(client, make_user, "cited spots")
    notes = await indexed(client, owner, project_id, "notes.md", NOTES_V1.encode())
    document_id = notes["document_id"]
    found = await client.post(
        f"/projects/{project_id}/search", json={"query": QUESTION, "profile": "qa"}, headers=alice
    )
    top = found.json()["results"][0]
    reply = {"answer": "It is dropped.", "has_answer": True, "used_chunk_ids": [top["chunk_id"]]}
    with chat_model(client, ListChat(responses=[AIMessage(content=json.dumps(reply))])):
        answered = await client.post(f"/projects/{project_id}/qa", json={"question": QUESTION}, headers=alice)
    assert answered.status_code == 200, answered.text
    (citation,) = answered.json()["citations"]
    revised = await client.patch(
        f"/projects/{project_id}/documents/{document_id}", json={"content": NOTES_V2}, headers=owner
    )
    assert revised.status_code == 202 and revised.json()["version"] == 2, revised.text
    job = await wait_for_job(client, owner, project_id, revised.json()["job_id"])
    assert job["status"] == "succeeded", job
    page = await indexed(client, owner, project_id, "slices.html", PAGE.encode())
    pdf = await indexed(client, owner, project_id, "think-python.pdf", pdf_excerpt())
    scan_pdf = scanned_pdf(THINK_PYTHON, [DEBUGGING_PAGE, DEBUGGING_PAGE + 1, DEBUGGING_PAGE + 2], dpi=200)
    scan = await indexed(client, owner, project_id, "scan.pdf", scan_pdf)
    deck = await indexed(client, owner, project_id, "aula.pptx", deck_bytes())
    outsider = await make_user("outsider")
    elsewhere = await create_project(client, outsider, name="elsewhere")
    theirs = await indexed(client, outsider, elsewhere, "theirs.md", b"# Theirs\n\nAnother project's.\n")
    return {
        "project_id": project_id, "owner": owner, "editor": editor, "alice": alice, "bob": bob,
        "document_id": document_id, "citation": citation, "thread_id": answered.json()["thread_id"],
        "page": page["document_id"], "pdf": pdf["document_id"], "scan": scan["document_id"],
        "deck": deck["document_id"],
        "outsider": outsider,
        "elsewhere": elsewhere, "theirs": theirs["document_id"],
    }  # fmt: skip


async def test_a_citation_names_the_version_and_characters_it_read(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    citation = cited["citation"]
    assert citation["document_id"] == cited["document_id"] and citation["document_version"] == 1
    assert 0 <= citation["char_start"] < citation["char_end"] <= len(NOTES_V1)
    assert "owner" in NOTES_V1[citation["char_start"] : citation["char_end"]]
    # The stored thread keeps it: the answer read tomorrow opens the same version.
    thread = await client.get(
        f"/projects/{cited['project_id']}/qa/threads/{cited['thread_id']}", headers=cited["alice"]
    )
    stored = thread.json()["messages"][-1]["citations"][0]
    assert (stored["document_version"], stored["char_start"], stored["char_end"]) == (
        1, citation["char_start"], citation["char_end"],
    )  # fmt: skip


async def test_a_viewer_opens_the_old_version_the_citation_read(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    project_id, document_id, citation = cited["project_id"], cited["document_id"], cited["citation"]
    old = await client.get(version_url(project_id, document_id, 1, "file"), headers=cited["bob"])
    assert old.status_code == 200 and old.content == NOTES_V1.encode()
    assert old.headers["content-type"] == "text/markdown; charset=utf-8"
    assert old.headers["content-disposition"].startswith('inline; filename="notes.md"')
    assert old.headers["x-content-type-options"] == "nosniff"
    assert old.headers["cache-control"].startswith("private")
    again = await client.get(
        version_url(project_id, document_id, 1, "file"),
        headers={**cited["bob"], "If-None-Match": old.headers["etag"]},
    )
    assert again.status_code == 304 and again.content == b""
    new = await client.get(version_url(project_id, document_id, 2, "file"), headers=cited["bob"])
    assert new.status_code == 200 and new.content == NOTES_V2.encode()

    query = {"char_start": citation["char_start"], "char_end": citation["char_end"]}
    url = version_url(project_id, document_id, 1, "text")
    spot = await client.get(url, params=query, headers=cited["bob"])
    assert spot.status_code == 200, spot.text
    body = spot.json()
    assert (body["version"], body["source_type"], body["shown_as"]) == (1, "markdown", "text")
    assert body["passage"]["text"] == NOTES_V1[citation["char_start"] : citation["char_end"]]
    context = body["context"]
    assert context["char_start"] <= citation["char_start"] and citation["char_end"] <= context["char_end"]
    assert context["text"] == NOTES_V1[context["char_start"] : context["char_end"]]
    assert "Borrowing" not in context["text"]  # version 1's text, not the new one's


async def test_a_pdf_opens_at_its_page_with_the_passage_of_its_live_chunks(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    project_id, pdf, owner = cited["project_id"], cited["pdf"], cited["owner"]
    chunks = (await client.get(f"/projects/{project_id}/documents/{pdf}/chunks", headers=owner)).json()
    chunk = next(c for c in chunks if c["page_start"] == 2)
    file = await client.get(version_url(project_id, pdf, 1, "file"), headers=cited["alice"])
    assert file.status_code == 200 and file.content.startswith(b"%PDF-")
    assert file.headers["content-type"] == "application/pdf"
    query = {"char_start": chunk["char_start"], "char_end": chunk["char_end"]}
    url = version_url(project_id, pdf, 1, "text")
    spot = (await client.get(url, params=query, headers=cited["alice"])).json()
    assert (spot["shown_as"], spot["location"], spot["context"]) == ("pdf", "page", None)
    assert spot["passage"]["text"] == chunk["text"] and spot["passage"]["page_start"] == 2


async def test_a_web_page_is_served_inert_and_shown_as_its_text(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    project_id, page = cited["project_id"], cited["page"]
    file = await client.get(version_url(project_id, page, 1, "file"), headers=cited["alice"])
    assert file.status_code == 200 and file.content == PAGE.encode()
    assert file.headers["content-security-policy"].startswith("sandbox")  # opened by its URL, nothing runs
    spot = (await client.get(version_url(project_id, page, 1, "text"), headers=cited["alice"])).json()
    assert spot["shown_as"] == "text" and "contiguous run of elements" in spot["context"]["text"]
    assert "alert" not in spot["context"]["text"]


async def test_nobody_else_reads_a_version(client: httpx.AsyncClient, cited: dict[str, Any]) -> None:
    project_id, document_id, outsider = cited["project_id"], cited["document_id"], cited["outsider"]
    for what in ("file", "text", "pages/1/highlight", "slides/1"):
        # Not a member: 404, as if there were nothing there.
        denied = await client.get(version_url(project_id, document_id, 1, what), headers=outsider)
        assert denied.status_code == 404, (what, denied.text)
        # Guessed ids, a version that does not exist, another project's document through this project.
        for url in (
            version_url(project_id, str(uuid.uuid4()), 1, what),
            version_url(str(uuid.uuid4()), document_id, 1, what),
            version_url(project_id, document_id, 3, what),
            version_url(project_id, cited["theirs"], 1, what),
            version_url(cited["elsewhere"], document_id, 1, what),
        ):
            for caller in (cited["alice"], outsider):
                response = await client.get(url, headers=caller)
                assert response.status_code == 404, (url, response.text)
        assert (await client.get(version_url(project_id, document_id, 1, what))).status_code == 401
        # Numbers the columns cannot hold are refused before any query.
        for bad in (0, 2**31):
            url = version_url(project_id, document_id, bad, what)
            response = await client.get(url, headers=cited["alice"])
            assert response.status_code == 422, response.text
    # Theirs is still theirs: the outsider reads their own document.
    own = await client.get(version_url(cited["elsewhere"], cited["theirs"], 1, "file"), headers=outsider)
    assert own.status_code == 200 and own.content.startswith(b"# Theirs")


async def test_a_range_must_be_whole(client: httpx.AsyncClient, cited: dict[str, Any]) -> None:
    url = version_url(cited["project_id"], cited["document_id"], 1, "text")
    for query in ({"char_start": 5}, {"char_start": 9, "char_end": 3}, {"char_start": -1, "char_end": 3}):
        response = await client.get(url, params=query, headers=cited["alice"])
        assert response.status_code == 422, (query, response.text)


def printed(first: str, last: str) -> pymupdf.Rect:
    """Where the book's text layer prints the run of words from `first` to `last` on the Debugging page, as
    fractions of the page."""
    with pymupdf.open(THINK_PYTHON) as book:
        page = book[DEBUGGING_PAGE]
        words = page.get_text("words")
        start = next(i for i, w in enumerate(words) if w[4] == first)
        end = next(i for i, w in enumerate(words) if i >= start and w[4] == last)
        run = pymupdf.Rect()
        for word in words[start : end + 1]:
            run |= pymupdf.Rect(word[:4])
        width, height = page.rect.width, page.rect.height
        return pymupdf.Rect(run.x0 / width, run.y0 / height, run.x1 / width, run.y1 / height)


def boxes_of(answer: dict[str, Any]) -> list[pymupdf.Rect]:
    return [pymupdf.Rect(b["x0"], b["y0"], b["x1"], b["y1"]) for b in answer["boxes"]]


async def test_a_scanned_page_highlights_the_passage_where_the_page_prints_it(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    project_id, scan, alice = cited["project_id"], cited["scan"], cited["alice"]
    url = version_url(project_id, scan, 1, "pages/1/highlight")
    # A citation whose chunks are gone sends its own text: the sentence's two printed lines are boxed.
    answer = (await client.get(url, params={"quote": BUGS}, headers=alice)).json()
    assert answer["source"] == "ocr" and answer["matched_words"] == answer["passage_words"] == len(
        page_highlight.tokens(BUGS)
    )
    sentence = printed("For", "debugging.")
    near = pymupdf.Rect(sentence.x0 - 0.015, sentence.y0 - 0.015, sentence.x1 + 0.015, sentence.y1 + 0.015)
    lines = boxes_of(answer)
    assert len(lines) == 2 and all(line in near for line in lines), (lines, sentence)
    assert printed("whimsical", "whimsical").intersects(lines[0])
    assert printed("tracking", "tracking").intersects(lines[1])
    # A live citation names its chunk's characters: the chunk's text is found on the page where it is printed.
    chunks = (await client.get(f"/projects/{project_id}/documents/{scan}/chunks", headers=alice)).json()
    chunk = next(c for c in chunks if "whimsical" in c["text"] and c["page_start"] == 1)
    query = {"char_start": chunk["char_start"], "char_end": chunk["char_end"]}
    answer = (await client.get(url, params=query, headers=alice)).json()
    assert any(printed("whimsical", "whimsical").intersects(box) for box in boxes_of(answer)), answer
    # The next page does not print it: read, and no box.
    other = await client.get(
        version_url(project_id, scan, 1, "pages/2/highlight"), params={"quote": BUGS}, headers=alice
    )
    assert other.status_code == 200 and other.json()["boxes"] == [], other.text


async def test_a_class_opening_one_scanned_page_reads_it_once(
    client: httpx.AsyncClient, cited: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    read_page = page_highlight.page_words_bounded

    async def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(kwargs["page"])
        return await read_page(*args, **kwargs)

    monkeypatch.setattr(page_highlight, "page_words_bounded", counted)
    project_id, scan = cited["project_id"], cited["scan"]
    url = version_url(project_id, scan, 1, "pages/3/highlight")  # no other test reads page 3
    query = {"quote": "Programming languages are not the only place you find errors, bugs and debugging."}
    class_at_once = [cited[name] for name in ("alice", "bob", "editor", "owner")] * 2  # more than the 2 reads
    answers = await asyncio.gather(*(client.get(url, params=query, headers=who) for who in class_at_once))
    assert [a.status_code for a in answers] == [200] * len(class_at_once)
    assert len({a.text for a in answers}) == 1 and reads == [3]
    again = await client.get(url, params=query, headers=cited["bob"])
    assert again.text == answers[0].text and reads == [3]  # kept: never read a second time


async def test_a_page_shown_as_text_or_missing_is_refused_with_its_reason(
    client: httpx.AsyncClient, cited: dict[str, Any]
) -> None:
    project_id, alice = cited["project_id"], cited["alice"]
    shown_as_text = await client.get(
        version_url(project_id, cited["document_id"], 1, "pages/1/highlight"), headers=alice
    )
    assert shown_as_text.status_code == 422 and "shown as text" in shown_as_text.json()["detail"]
    missing = await client.get(version_url(project_id, cited["scan"], 1, "pages/9/highlight"), headers=alice)
    assert missing.status_code == 422 and "no page 9" in missing.json()["detail"], missing.text
    too_long = await client.get(
        version_url(project_id, cited["scan"], 1, "pages/1/highlight"),
        params={"quote": "x" * 4001},
        headers=alice,
    )
    assert too_long.status_code == 422


async def test_a_deck_slide_is_laid_out_for_drawing(client: httpx.AsyncClient, cited: dict[str, Any]) -> None:
    project_id, deck, alice = cited["project_id"], cited["deck"], cited["alice"]
    response = await client.get(version_url(project_id, deck, 1, "slides/2"), headers=alice)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"].startswith("private")
    layout = response.json()
    assert (layout["slide"], layout["slide_count"]) == (2, 2)
    title, body = layout["shapes"]
    assert title["kind"] == "title" and title["paragraphs"][0]["text"] == "Moves"
    assert body["paragraphs"][0]["text"] == "Assigning a String moves it." and title["y1"] <= body["y0"]
    missing = await client.get(version_url(project_id, deck, 1, "slides/3"), headers=alice)
    assert missing.status_code == 422 and "no slide 3" in missing.json()["detail"]
    not_a_deck = await client.get(version_url(project_id, cited["document_id"], 1, "slides/1"), headers=alice)
    assert not_a_deck.status_code == 422 and "slide deck" in not_a_deck.json()["detail"]

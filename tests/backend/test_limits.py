"""Limits before work (issue 11, part 1), each proved by the attack: a body over its route's cap is
refused (413) before routing, parsing or authentication, a chunked one cut off at the cap; request
fields and pages have maximums; a 1 MB heading is not copied into every chunk; and a PDF past the
page, memory or time bound ends `failed` with the reason while the worker goes on indexing."""

import dataclasses
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from pydantic import BaseModel, ValidationError
from starlette.types import Message, Receive, Scope, Send

from backend.documents.schemas import DocumentTextUpdate
from backend.middleware.body_limit import MULTIPART_OVERHEAD, BodyLimitMiddleware
from backend.plans.schemas import NoteRequest, PlanRequest
from backend.qa.schemas import QARequest
from backend.questions.schemas import AttemptCreate, GenerateRequest
from core.runtime.services import ServiceUrls
from core.settings import Settings
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import (
    Caller,
    UserFactory,
    create_project,
    own_app,
    upload,
    wait_for_job,
)
from tests.workers.pdf_bombs import glyph_bomb_pdf, many_pages_pdf, offpage_bomb_pdf

UPLOAD_CAP = 1024 * 1024  # this module's own app: MAX_UPLOAD_BYTES
JSON_CAP = 4 * 1024  # MAX_JSON_BODY_BYTES
CHUNK = 16 * 1024
REDIS_DB = 13  # this module's app and workers only: the session's worker polls database 0
BOUNDED_WORKER = {"PDF_MAX_PAGES": "20", "PARSE_MAX_MEMORY_MB": "384", "PARSE_TIMEOUT_S": "120"}
SMALL_PDF_TEXT = "Bounded parsing still reads ordinary files: page {n} of a short handout on ownership."


@dataclasses.dataclass
class Pusher:
    """A chunked body (no Content-Length) of up to `total` bytes, made only as it is pulled."""

    total: int
    head: bytes = b""
    pulled: int = 0

    async def stream(self) -> AsyncIterator[bytes]:
        if self.head:
            self.pulled += len(self.head)
            yield self.head
        while self.pulled < self.total:
            self.pulled += CHUNK
            yield b"x" * CHUNK


MULTIPART_HEAD = (
    b'--bound\r\nContent-Disposition: form-data; name="file"; filename="big.md"\r\n'
    b"Content-Type: text/markdown\r\n\r\n"
)
MULTIPART = {"Content-Type": "multipart/form-data; boundary=bound"}


@pytest.fixture(scope="module")
def own_urls(services: ServiceUrls) -> ServiceUrls:
    return dataclasses.replace(services, redis_url=f"{services.redis_url}?db={REDIS_DB}")


@pytest.fixture(scope="module")
async def small(settings: Settings, own_urls: ServiceUrls) -> AsyncIterator[httpx.AsyncClient]:
    """An app with small caps, so going over them is cheap."""
    capped = settings.with_values({"MAX_UPLOAD_BYTES": UPLOAD_CAP, "MAX_JSON_BODY_BYTES": JSON_CAP})
    async with own_app(capped, own_urls) as (_, http):
        yield http


@pytest.fixture(scope="module")
async def project_id(small: httpx.AsyncClient, owner: Caller) -> str:
    return await create_project(small, owner, name="limits")


# Bodies ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, "Bearer not-a-key"])
async def test_chunked_upload_over_the_cap_is_413_before_authentication(
    small: httpx.AsyncClient, key: str | None
) -> None:
    body = Pusher(total=10 * UPLOAD_CAP, head=MULTIPART_HEAD)
    headers = {**MULTIPART, **({"Authorization": key} if key else {})}
    response = await small.post(f"/projects/{uuid4()}/documents", content=body.stream(), headers=headers)
    assert response.status_code == 413, response.text  # not 401: the limit ran before the key was looked at
    detail = "The file is larger than the limit of 1 MB."
    assert response.json() == {
        "detail": detail,
        "code": "upload.too_large",
        "params": {"limit": "1 MB"},
        "message": detail,  # no Accept-Language: English
    }
    # The client could push no more than the cap and the chunk that crossed it, never 10x the cap.
    assert body.pulled <= UPLOAD_CAP + MULTIPART_OVERHEAD + CHUNK


async def test_declared_content_length_over_the_cap_is_413_at_once(
    small: httpx.AsyncClient, owner: Caller, project_id: str
) -> None:
    too_big = b"# big\n\n" + b"word " * ((UPLOAD_CAP + MULTIPART_OVERHEAD) // 5 + 1)
    for headers in ({"Authorization": "Bearer not-a-key"}, owner):
        response = await upload(small, headers, project_id, "big.md", too_big)
        assert response.status_code == 413
        assert "1 MB" in response.json()["detail"]
    # Just under the cap the same route takes the file.
    response = await upload(small, owner, project_id, "fits.md", b"# fits\n\n" + b"word " * 1000)
    assert response.status_code == 202, response.text


async def test_json_body_over_its_cap_is_413(
    small: httpx.AsyncClient, owner: Caller, project_id: str
) -> None:
    url = f"/projects/{project_id}/search"
    big = json.dumps({"query": "ownership", "debug": False, "pad": "x" * (2 * JSON_CAP)}).encode()
    response = await small.post(url, content=big, headers={**owner, "Content-Type": "application/json"})
    assert response.status_code == 413
    detail = "The request body is larger than the limit of 4 KB."
    assert response.json() == {
        "detail": detail,
        "code": "upload.body_too_large",
        "params": {"limit": "4 KB"},
        "message": detail,
    }
    # Chunked, and without a key: still 413 at the cap, before authentication.
    body = Pusher(total=100 * JSON_CAP, head=b'{"query": "')
    response = await small.post(url, content=body.stream(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert body.pulled <= JSON_CAP + CHUNK


async def test_text_edit_of_a_document_is_capped_at_the_upload_limit(
    small: httpx.AsyncClient, owner: Caller, project_id: str
) -> None:
    response = await upload(small, owner, project_id, "notes.md", b"# Notes\n\nA short note on borrowing.\n")
    assert response.status_code == 202, response.text
    url = f"/projects/{project_id}/documents/{response.json()['document_id']}"
    body = Pusher(total=10 * UPLOAD_CAP, head=b'{"content": "')
    response = await small.patch(
        url, content=body.stream(), headers={**owner, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert body.pulled <= UPLOAD_CAP + MULTIPART_OVERHEAD + CHUNK
    # Text bigger than MAX_JSON_BODY_BYTES but within the upload limit is a document edit, not too big.
    response = await small.patch(url, json={"content": "# Notes\n\n" + "word " * 2000}, headers=owner)
    assert response.status_code == 202, response.text


async def test_the_app_never_sees_more_than_the_cap() -> None:
    """The middleware alone, around an app that reads everything it is given."""
    seen: list[int] = []

    async def greedy(scope: Scope, receive: Receive, send: Send) -> None:
        total = 0
        while True:
            message = await receive()
            total += len(message.get("body", b""))
            seen.append(total)
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    pulled = 0
    piece = 1000  # smaller than the cap: the app gets pieces until the next one would pass it

    async def client_body() -> Message:
        nonlocal pulled
        pulled += piece
        return {"type": "http.request", "body": b"x" * piece, "more_body": True}

    sent: list[Message] = []

    async def record(message: Message) -> None:
        sent.append(message)

    app = BodyLimitMiddleware(greedy, upload_bytes=UPLOAD_CAP, json_bytes=JSON_CAP)
    scope = {"type": "http", "method": "POST", "path": "/projects/p/search", "headers": []}
    await app(scope, client_body, record)
    assert sent[0]["status"] == 413 and json.loads(sent[1]["body"])["detail"]
    assert max(seen) == 4000 and pulled == 5000  # 4 pieces fit in 4 KB, the 5th was never handed on

    # A declared Content-Length over the cap: answered without calling the app or reading at all.
    seen.clear()
    sent.clear()
    pulled = 0
    scope["headers"] = [(b"content-length", str(JSON_CAP + 1).encode())]
    await app(scope, client_body, record)
    assert sent[0]["status"] == 413 and not seen and pulled == 0


# Fields and pages ------------------------------------------------------------------------------


async def test_a_long_filename_is_cut_keeping_its_extension(
    small: httpx.AsyncClient, owner: Caller, project_id: str
) -> None:
    response = await upload(small, owner, project_id, "n" * 600 + ".md", b"# Named\n\nA short text.\n")
    assert response.status_code == 202, response.text
    url = f"/projects/{project_id}/documents/{response.json()['document_id']}"
    document = (await small.get(url, headers=owner)).json()
    assert len(document["filename"]) == 255 and document["filename"].endswith(".md")
    assert len(document["title"]) <= 255


async def test_over_long_fields_are_422(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    headers = await make_user("fields")
    project = await create_project(client, headers, name="fields")
    attempts = [
        ("post", "/projects", {"name": "n" * 201}),
        ("patch", f"/projects/{project}", {"description": "d" * 5001}),
        ("post", f"/projects/{project}/members", {"email": "e" * 321}),
        ("post", f"/projects/{project}/search", {"query": "q" * 2001}),
        ("post", f"/projects/{project}/search", {"query": "q", "filters": {"section": ["h" * 201]}}),
        ("post", f"/projects/{project}/search", {"query": "q", "filters": {"section": ["a"] * 11}}),
        ("post", f"/projects/{project}/search", {"query": "q", "filters": {"section": "s" * 1301}}),
        ("post", f"/projects/{project}/search", {"query": "q", "prefer_section": "s" * 1301}),
    ]
    for method, url, body in attempts:
        response = await client.request(method, url, json=body, headers=headers)
        assert response.status_code == 422, (url, body, response.status_code, response.text)


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        # The agent routes check for a chat model before the body, so their schemas are tried directly.
        (QARequest, {"question": "q" * 2001}),
        (PlanRequest, {"topic": "t" * 301}),
        (NoteRequest, {"topic": "t" * 301}),
        (GenerateRequest, {"section": ["h" * 201]}),
        (GenerateRequest, {"section": ["h"] * 11}),
        (GenerateRequest, {"types": ["short_answer"] * 11}),
        (AttemptCreate, {"answer": "a" * 5001}),
        (DocumentTextUpdate, {"title": "t" * 301}),
    ],
)
def test_agent_request_fields_have_maximums(model: type[BaseModel], fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(fields)


async def test_list_endpoints_page_with_a_maximum(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    headers = await make_user("pages")
    projects = [await create_project(client, headers, name=f"p{n}") for n in range(3)]
    project = projects[0]
    too_big = [
        ("/projects", 501),
        (f"/projects/{project}/documents", 1001),
        (f"/projects/{project}/qa/threads", 201),
        (f"/projects/{project}/plans", 201),
        (f"/projects/{project}/questions", 201),
        (f"/projects/{project}/queries", 501),
        (f"/projects/{project}/evaluations", 501),
    ]
    for url, limit in too_big:
        response = await client.get(url, params={"limit": limit}, headers=headers)
        assert response.status_code == 422, (url, response.text)
        response = await client.get(url, params={"offset": -1}, headers=headers)
        assert response.status_code == 422, (url, response.text)
    first = (await client.get("/projects", params={"limit": 2}, headers=headers)).json()
    rest = (await client.get("/projects", params={"limit": 2, "offset": 2}, headers=headers)).json()
    assert [p["id"] for p in first + rest] == projects


# Parsing bounds, through the worker ------------------------------------------------------------


async def test_a_1mb_heading_is_bounded_in_chunk_headers_and_the_document_indexes(
    client: httpx.AsyncClient, worker: subprocess.Popen[bytes], make_user: UserFactory
) -> None:
    headers = await make_user("heading")
    project = await create_project(client, headers, name="heading")
    heading = "Ownership " * 100_000  # a 1 MB `#` line
    text = f"# {heading}\n\n" + "Each value has one owner; the value is dropped with it. " * 200
    response = await upload(client, headers, project, "huge-heading.md", text.encode())
    assert response.status_code == 202, response.text
    job = await wait_for_job(client, headers, project, response.json()["job_id"])
    assert job["status"] == "succeeded", job
    url = f"/projects/{project}/documents/{response.json()['document_id']}/chunks"
    chunks = (await client.get(url, params={"limit": 1000}, headers=headers)).json()
    assert len(chunks) > 100
    assert all(len(c["context_header"]) <= 300 for c in chunks)
    assert all(len(part) <= 200 for c in chunks for part in c["section_path"])
    assert sum(len(c["text"]) for c in chunks) >= len(heading)  # the chunk text keeps the content
    assert worker.poll() is None


@pytest.fixture
def bounded_worker(own_urls: ServiceUrls, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Stopped at the end of its test: the timeout test's worker must be the only one on REDIS_DB."""
    process = start_worker(own_urls, data_dir, "--queue", "index", **BOUNDED_WORKER)
    yield process
    stop_worker(process)


async def _index(
    http: httpx.AsyncClient, headers: Caller, project: str, name: str, data: bytes
) -> dict[str, Any]:
    response = await upload(http, headers, project, name, data, "application/pdf")
    assert response.status_code == 202, response.text
    job = await wait_for_job(http, headers, project, response.json()["job_id"], timeout=300)
    url = f"/projects/{project}/documents/{response.json()['document_id']}"
    return {"job": job, "document": (await http.get(url, headers=headers)).json()}


async def test_pdf_bounds_fail_the_document_and_the_worker_lives(
    small: httpx.AsyncClient, owner: Caller, bounded_worker: subprocess.Popen[bytes]
) -> None:
    project = await create_project(small, owner, name="pdf bounds")
    # PDF_MAX_PAGES=20 and PARSE_MAX_MEMORY_MB=384 in this worker; the uploads cap of this app is small,
    # and these files are small: the cost is in parsing them.
    cases = [
        ("long.pdf", many_pages_pdf(30), "30 pages, more than the 20 pages allowed"),
        ("bomb.pdf", glyph_bomb_pdf(), "needs more memory than allowed to parse"),
    ]
    for name, data, reason in cases:
        assert len(data) < UPLOAD_CAP, name
        outcome = await _index(small, owner, project, name, data)
        assert outcome["job"]["status"] == "failed", outcome
        assert reason in outcome["job"]["error"] and reason in outcome["document"]["error"]
        assert bounded_worker.poll() is None, "the worker must survive the bound"
    # The same worker, under the same bounds, indexes the next document.
    outcome = await _index(small, owner, project, "handout.pdf", many_pages_pdf(3, SMALL_PDF_TEXT))
    assert outcome["job"]["status"] == "succeeded", outcome
    assert outcome["document"]["page_count"] == 3 and outcome["document"]["chunk_count"] >= 1
    assert bounded_worker.poll() is None


async def test_pdf_parse_timeout_fails_the_document(
    small: httpx.AsyncClient, owner: Caller, own_urls: ServiceUrls, data_dir: Path
) -> None:
    project = await create_project(small, owner, name="pdf timeout")
    process = start_worker(own_urls, data_dir, "--queue", "index", PARSE_TIMEOUT_S="1")
    try:
        outcome = await _index(small, owner, project, "slow.pdf", offpage_bomb_pdf())
        assert outcome["job"]["status"] == "failed", outcome
        assert "parsing took longer than 1 s" in outcome["job"]["error"]
        assert process.poll() is None
    finally:
        stop_worker(process)

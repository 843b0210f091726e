"""POST /projects/{id}/qa on a small real project (three Rust-book chapters, indexed by the real
worker): API behaviour with a scripted fake chat model, then end to end with the real local model."""

import json
import subprocess
import time
import tomllib
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI

from core.llm.reply_cache import ReplyCache
from tests.chat_fakes import ListChat, StreamingScripted
from tests.conftest import (
    SHARED_DATA,
    Caller,
    UserFactory,
    add_member,
    changed_runtime,
    create_project,
    upload,
    wait_for_job,
)

BOOK = SHARED_DATA / "rust-book"
CHAPTERS = ["ch04-01-what-is-ownership.md", "ch04-02-references-and-borrowing.md", "ch08-02-strings.md"]


@dataclass
class RustProject:
    owner: Caller
    viewer: Caller
    project_id: str
    document_ids: dict[str, str]  # chapter file name -> document id


@pytest.fixture(scope="module")
async def project(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> RustProject:
    owner, viewer = await make_user("qa-owner"), await make_user("qa-viewer")
    project_id = await create_project(client, owner, name="rust", language="en")
    await add_member(client, owner, project_id, viewer, "viewer")
    ids = {}
    for name in CHAPTERS:
        response = await upload(client, owner, project_id, name, (BOOK / "src" / name).read_bytes())
        assert response.status_code == 202, response.text
        ids[name] = response.json()["document_id"]
        job = await wait_for_job(client, owner, project_id, response.json()["job_id"])
        assert job["status"] == "succeeded", job
    return RustProject(owner, viewer, project_id, ids)


def chat_model(client: httpx.AsyncClient, llm: BaseChatModel | None) -> AbstractContextManager[None]:
    """The session app's chat model, swapped for one test and put back."""
    app = client._transport.app  # type: ignore[attr-defined]  # the in-process ASGI app
    return changed_runtime(app, llm=llm)


async def ask(
    client: httpx.AsyncClient, project: RustProject, headers: Caller | None = None, **body: Any
) -> Any:
    return await client.post(
        f"/projects/{project.project_id}/qa", json=body, headers=headers or project.owner
    )


async def sse_events(
    client: httpx.AsyncClient, project: RustProject, **body: Any
) -> AsyncIterator[tuple[str, Any, float]]:
    """(event, data, seconds since the request) for each server-sent event."""
    started = time.perf_counter()
    url = f"/projects/{project.project_id}/qa"
    async with client.stream("POST", url, json={**body, "stream": True}, headers=project.owner) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        event = None
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                yield (
                    event or "message",
                    json.loads(line.removeprefix("data: ")),
                    time.perf_counter() - started,
                )


def reply(**fields: Any) -> AIMessage:
    return AIMessage(content=json.dumps(fields))


def plan(question: str) -> AIMessage:
    return reply(question=question, terms=[], document="", ambiguous=False, clarification="")


CONCAT = "What is the difference between using a + b and a.push_str(b) to concatenate two strings?"


async def top_chunk(client: httpx.AsyncClient, project: RustProject, query: str) -> int:
    response = await client.post(
        f"/projects/{project.project_id}/search",
        json={"query": query, "profile": "qa"},
        headers=project.owner,
    )
    return response.json()["results"][0]["chunk_id"]


# --- API behaviour, with a scripted fake model -------------------------------------------------


async def test_without_a_chat_model_the_route_says_why(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    with chat_model(client, None):
        response = await ask(client, project, question="What is ownership?")
    assert response.status_code == 503 and "LLM_BASE_URL" in response.text


async def test_non_members_get_404_and_viewers_may_ask(
    client: httpx.AsyncClient, project: RustProject, make_user: UserFactory
) -> None:
    chunk_id = await top_chunk(client, project, CONCAT)
    fake = ListChat(
        responses=[reply(answer="+ takes ownership of a.", has_answer=True, used_chunk_ids=[chunk_id])]
    )
    with chat_model(client, fake):
        stranger = await ask(client, project, await make_user("stranger"), question=CONCAT)
        assert stranger.status_code == 404
        response = await ask(client, project, project.viewer, question=CONCAT)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["has_answer"] is True and body["outcome"] == "answered"
    assert [c["chunk_id"] for c in body["citations"]] == [chunk_id]
    assert body["citations"][0]["document_id"] == project.document_ids["ch08-02-strings.md"]
    assert body["debug"] is None and body["thread_id"]


async def test_threads_keep_history_and_belong_to_their_user(
    client: httpx.AsyncClient, project: RustProject, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    chunk_id = await top_chunk(client, project, "What is a reference?")  # searched as asked
    script = [  # the first question stands alone: no planner call; the follow-up is rewritten first
        reply(answer="A pointer that borrows a value.", has_answer=True, used_chunk_ids=[chunk_id, 424242]),
        plan("What are the rules for mutable references in Rust?"),
        reply(answer="Only one mutable reference at a time.", has_answer=True, used_chunk_ids=[chunk_id]),
    ]
    with chat_model(client, ListChat(responses=script)):
        first = (await ask(client, project, question="What is a reference?", debug=True)).json()
        assert first["debug"]["invented_ids"] == [424242]
        assert [c["chunk_id"] for c in first["citations"]] == [chunk_id]
        thread = first["thread_id"]
        follow = await ask(
            client, project, question="and what about mutable ones?", thread_id=thread, debug=True
        )
        assert follow.status_code == 200, follow.text
        assert (
            follow.json()["debug"]["plan"]["question"] == "What are the rules for mutable references in Rust?"
        )
        assert follow.json()["thread_id"] == thread
        # Another member (or project, or a made-up id) cannot continue or read the thread.
        assert (
            await ask(client, project, project.viewer, question="hi", thread_id=thread)
        ).status_code == 404
        assert (await ask(client, project, question="hi", thread_id=str(uuid.uuid4()))).status_code == 404
    url = f"/projects/{project.project_id}/qa/threads"
    assert (await client.get(f"{url}/{thread}", headers=project.viewer)).status_code == 404
    detail = (await client.get(f"{url}/{thread}", headers=project.owner)).json()
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant", "user", "assistant"]
    assert detail["messages"][2]["content"] == "and what about mutable ones?"
    assert detail["messages"][1]["citations"][0]["chunk_id"] == chunk_id
    cur = await db.execute(
        "SELECT count(*) AS n FROM qa_messages WHERE session_id = %s AND project_id = %s",
        (thread, project.project_id),
    )
    assert (await cur.fetchone())["n"] == 4  # type: ignore[index]  # the trigger set each row's project
    listed = (await client.get(url, headers=project.owner)).json()
    assert thread in [t["id"] for t in listed]
    assert thread not in [t["id"] for t in (await client.get(url, headers=project.viewer)).json()]


async def test_a_document_the_user_names_narrows_retrieval(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    question = "In ch08-02-strings, what happens to ownership with the + operator?"
    # Named by its file name in the question itself: no model call decides the filter.
    fake = ListChat(responses=[reply(answer="-", has_answer=False, used_chunk_ids=[])])
    with chat_model(client, fake):
        body = (await ask(client, project, question=question, debug=True)).json()
    strings_doc = project.document_ids["ch08-02-strings.md"]
    assert body["debug"]["document_filter"] == strings_doc
    assert body["debug"]["retrieved"] and {c["document_id"] for c in body["debug"]["retrieved"]} == {
        strings_doc
    }
    assert body["outcome"] == "declined" and body["citations"] == []


async def test_an_answer_citing_no_shown_excerpt_is_unsupported_not_an_error(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    question = "What happens to a String when its owner goes out of scope?"
    invented = reply(answer="It is dropped.", has_answer=True, used_chunk_ids=[999_999_999])
    with chat_model(client, ListChat(responses=[invented])):
        response = await ask(client, project, question=question)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["outcome"] == "unsupported" and body["has_answer"] is False and body["citations"] == []


async def test_clarification_is_returned_and_nothing_is_retrieved(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    ambiguous = reply(
        question="How do I convert it?",
        terms=[],
        document="",
        ambiguous=True,
        clarification="A String to a number, or a number to a String?",
    )
    with chat_model(client, ListChat(responses=[reply(answer="Text.", has_answer=True), ambiguous])):
        first = (await ask(client, project, question="What is a String?")).json()
        body = (
            await ask(
                client, project, question="How do I convert it?", thread_id=first["thread_id"], debug=True
            )
        ).json()  # a follow-up that leans on its thread is planned by the model, which may ask back
    assert (
        body["outcome"] == "clarification"
        and body["clarification"] == "A String to a number, or a number to a String?"
    )
    assert body["has_answer"] is False and body["citations"] == [] and body["debug"]["retrieved"] == []
    assert "retrieval" not in body["debug"]["timings_ms"]


async def test_stream_sends_tokens_then_citations_then_done(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    chunk_id = await top_chunk(client, project, CONCAT)
    fake = StreamingScripted(
        messages=iter([reply(has_answer=True, answer="The + operator takes a.", used_chunk_ids=[chunk_id])])
    )
    with chat_model(client, fake):
        events = [(name, data) async for name, data, _ in sse_events(client, project, question=CONCAT)]
    names = [name for name, _ in events]
    # The best passages first, each with its most relevant sentence, before the model's first token.
    assert names[0] == "evidence" and events[0][1][0]["chunk_id"] == chunk_id
    assert events[0][1][0]["highlight"] in events[0][1][0]["text"]
    assert names[-2:] == ["citations", "done"] and set(names[1:-2]) == {"token"} and len(names) > 5
    confidence = events[-1][1]["confidence"]  # labelled by the embedded model's calibration
    assert confidence["label"] in ("high", "medium", "low") and "question_in_source" in confidence["signals"]
    assert "self_yes" not in confidence["signals"]  # that calibration keeps no self-check: none is asked
    assert "".join(data["text"] for name, data in events if name == "token") == "The + operator takes a."
    assert [c["chunk_id"] for c in events[-2][1]] == [chunk_id]
    assert events[-1][1]["has_answer"] is True and events[-1][1]["citations"] == events[-2][1]
    thread = events[-1][1]["thread_id"]
    detail = await client.get(f"/projects/{project.project_id}/qa/threads/{thread}", headers=project.owner)
    assert [m["content"] for m in detail.json()["messages"]] == [CONCAT, "The + operator takes a."]


async def streamed(client: httpx.AsyncClient, project: RustProject, question: str) -> dict[str, Any]:
    """A streamed reply's shown text, citations and final event."""
    events = [(name, data) async for name, data, _ in sse_events(client, project, question=question)]
    assert [name for name, _ in events if name == "error"] == [], events
    text = "".join(data["text"] for name, data in events if name == "token")
    return {"text": text, "citations": events[-2][1], "done": events[-1][1]}


async def test_a_repeated_question_gets_the_kept_reply_without_a_turn_at_the_model(
    client: httpx.AsyncClient, project: RustProject
) -> None:
    chunk_id = await top_chunk(client, project, CONCAT)
    answer = "The + operator takes ownership of a; push_str borrows b."
    # One reply scripted: a second call to the model would find none and fail the stream.
    fake = StreamingScripted(
        messages=iter([reply(has_answer=True, answer=answer, used_chunk_ids=[chunk_id])])
    )
    app = client._transport.app  # type: ignore[attr-defined]  # the in-process ASGI app
    with changed_runtime(app, llm=fake, replies=ReplyCache(app.state.runtime.redis, 60)):
        first = await streamed(client, project, CONCAT)
        again = await streamed(client, project, CONCAT)
    assert first["text"] == again["text"] == answer
    assert again["citations"] == first["citations"] and [c["chunk_id"] for c in again["citations"]] == [
        chunk_id
    ]
    assert again["done"]["confidence"] == first["done"]["confidence"]  # its signals kept with it
    assert again["done"]["has_answer"] is True and again["done"]["thread_id"] != first["done"]["thread_id"]


async def test_a_cut_off_reply_is_not_kept(client: httpx.AsyncClient, project: RustProject) -> None:
    chunk_id = await top_chunk(client, project, CONCAT)
    whole = reply(has_answer=True, answer="push_str appends a string slice.", used_chunk_ids=[chunk_id])
    cut = AIMessage(content='{"has_answer": true, "answer": "push_str app')
    fake = StreamingScripted(messages=iter([cut, whole]))
    app = client._transport.app  # type: ignore[attr-defined]
    with changed_runtime(app, llm=fake, replies=ReplyCache(app.state.runtime.redis, 60)):
        await streamed(client, project, CONCAT + " ")  # its own prompt: no reply kept by another test
        again = await streamed(client, project, CONCAT + " ")
    assert again["text"] == "push_str appends a string slice."  # the model was asked again


# --- End to end with the real local model ---------------------------------------------------------


def quiz_question(file: str, answer_fragment: str) -> str:
    """A real quiz prompt (chapters 1-9 only), picked by a fragment of its answer."""
    quiz = tomllib.loads((BOOK / "quizzes" / file).read_text())
    return next(
        q["prompt"]["prompt"].strip() for q in quiz["questions"] if answer_fragment in q["answer"]["answer"]
    )


def timings(body: dict[str, Any]) -> dict[str, float]:
    return body["debug"]["timings_ms"]


async def test_real_model_answers_a_quiz_question_citing_its_chapter(
    client: httpx.AsyncClient, project: RustProject, local_llm: ChatOpenAI
) -> None:
    question = quiz_question("ch08-02-string-sec1.toml", "consumes ownership")
    with chat_model(client, local_llm):
        response = await ask(client, project, question=question, debug=True)
    assert response.status_code == 200, response.text
    body = response.json()
    print("quiz answer:", body["answer"], "| timings:", timings(body), "| tokens:", body["debug"]["tokens"])
    assert body["has_answer"] is True, body
    strings_doc = project.document_ids["ch08-02-strings.md"]
    assert strings_doc in {c["document_id"] for c in body["citations"]}, body["citations"]


async def test_real_model_says_not_found_for_an_absent_topic(
    client: httpx.AsyncClient, project: RustProject, local_llm: ChatOpenAI
) -> None:
    with chat_model(client, local_llm):
        body = (
            await ask(client, project, question="How do I configure a Kubernetes ingress?", debug=True)
        ).json()
    print("absent:", body["outcome"], body["debug"]["gate"], timings(body))
    assert body["has_answer"] is False and body["citations"] == []
    assert body["answer"] == "I could not find this in the project's material."


async def test_real_model_streams_tokens_then_citations(
    client: httpx.AsyncClient, project: RustProject, local_llm: ChatOpenAI
) -> None:
    with chat_model(client, local_llm):
        events = [
            e
            async for e in sse_events(
                client, project, question="Why can't I index into a String?", debug=True
            )
        ]
    names = [name for name, _, _ in events]
    # The passages first, then the answer's tokens, then its citations and the reply with its confidence.
    assert names[:2] == ["evidence", "token"] and names[-2:] == ["citations", "done"]
    assert names.count("token") > 3 and events[-1][1]["confidence"]["label"] in ("high", "medium", "low")
    done = events[-1][1]
    first_token_s = events[1][2]
    # httpx's in-process transport hands the body over only when it is complete, so the client's
    # clock cannot show streaming; the server's can: the first token left before generation ended.
    print(
        "stream: client saw the first event after",
        round(first_token_s, 2),
        "s;",
        timings(done),
        done["answer"],
    )
    assert timings(done)["first_token"] < timings(done)["generation"]
    # Answered, or (labelled low) not claimed but kept with its citations: the stream is what is tested.
    assert done["outcome"] in ("answered", "unsure") and done["citations"], done
    assert project.document_ids["ch08-02-strings.md"] in {c["document_id"] for c in done["citations"]}


async def test_real_model_rewrites_a_follow_up_with_the_thread(
    client: httpx.AsyncClient, project: RustProject, local_llm: ChatOpenAI
) -> None:
    with chat_model(client, local_llm):
        first = (await ask(client, project, question="What is a reference in Rust?", debug=True)).json()
        follow = await ask(
            client, project, question="and what about mutable ones?", thread_id=first["thread_id"], debug=True
        )
    body = follow.json()
    rewritten = body["debug"]["plan"]["question"].lower()
    print("follow-up rewritten:", rewritten, "|", body["answer"], "|", timings(body))
    assert "mutable" in rewritten and "reference" in rewritten
    chapter = project.document_ids["ch04-02-references-and-borrowing.md"]
    assert chapter in {c["document_id"] for c in body["debug"]["retrieved"]}  # the rewrite found it
    # Whether the 1.5B model then answers is a near-tie its server's prompt-cache state can flip (one
    # whole-suite run got "not found" where the same test alone answers): answered, it cites the chapter;
    # else it says so honestly, claiming nothing.
    if body["has_answer"]:
        assert chapter in {c["document_id"] for c in body["citations"]}
    else:
        assert body["outcome"] in ("not_found", "unsupported") and body["citations"] == []

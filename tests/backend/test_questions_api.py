"""The question bank API: generation, listing with filters, review, roles and attempts per user
(scripted fake chat model), then end to end with the real local model on two Rust-book chapters."""

import json
import re
import subprocess
import time
import tomllib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models import BaseChatModel

from tests.agents.helpers import OWNERSHIP, STRUCTS, ScriptedChat
from tests.backend.conftest import Api
from tests.bank import draft, store
from tests.conftest import (
    SHARED_DATA,
    Caller,
    UserFactory,
    add_member,
    create_project,
    upload,
    wait_for_job,
)

RUST_BOOK = SHARED_DATA / "rust-book"


@dataclass
class Course:
    id: str
    owner: Caller
    viewer: Caller
    stranger: Caller
    documents: dict[str, str]


async def index(api: Api, headers: Caller, project_id: str, name: str, text: str) -> str:
    response = await upload(api.http, headers, project_id, name, text.encode())
    assert response.status_code == 202, response.text
    job = await wait_for_job(api.http, headers, project_id, response.json()["job_id"])
    assert job["status"] == "succeeded", job
    return response.json()["document_id"]


@pytest.fixture(scope="module")
async def course(api: Api, make_user: UserFactory, worker: subprocess.Popen[bytes]) -> Course:
    owner, viewer, stranger = (
        await make_user("teacher"),
        await make_user("student"),
        await make_user("stranger"),
    )
    project_id = await create_project(api.http, owner, name="rust course", language="en")
    await add_member(api.http, owner, project_id, viewer, "viewer")
    documents = {
        "ownership": await index(api, owner, project_id, "ownership.md", OWNERSHIP),
        "structs": await index(api, owner, project_id, "structs.md", STRUCTS),
    }
    return Course(project_id, owner, viewer, stranger, documents)


def shown(prompt: str) -> list[int]:
    return [int(i) for i in re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE)]


def question_reply(question: str, answer: str | None = None, confidence: float = 0.9) -> Any:
    def step(prompt: str) -> str:
        first = re.search(r"^\[(\d+)\] [^:\n]*: (.*)$", prompt, re.MULTILINE)
        assert first is not None
        body: dict[str, Any] = {
            "question": question,
            "answer": answer or " ".join(first[2].split()[:6]),
            "explanation": "As the source says.",
            "difficulty": "easy",
            "confidence": confidence,
            "sources": [int(first[1])],
        }
        if "multiple-choice" in prompt:
            body["distractors"] = ["It is copied", "It is cloned", "It is borrowed"]
        return json.dumps(body)

    return step


def grade_reply(score: float) -> Any:
    def step(prompt: str) -> str:
        used = shown(prompt)[:1]
        return json.dumps(
            {"verdict": "correct", "score": score, "feedback": "ok", "missing": [], "used": used}
        )

    return step


def url(course: Course, path: str = "") -> str:
    return f"/projects/{course.id}/questions{path}"


@pytest.fixture(scope="module")
async def bank(api: Api, course: Course) -> list[dict[str, Any]]:
    """Three questions of the ownership document: two active, one sent to review; the teacher approves
    the two active ones (students study approved items only)."""
    llm = ScriptedChat(
        script=[
            question_reply("What happens to a String assigned to another variable?"),
            question_reply("How many mutable references to a value may exist at a time?"),
            question_reply(
                "How often does the garbage collector run?", answer="Every few seconds in a thread"
            ),
        ]
    )
    with api.model(llm):
        response = await api.http.post(
            url(course, "/generate"),
            json={"document_id": course.documents["ownership"], "n": 3},
            headers=course.owner,
        )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["active"] == 2 and body["review"] == 1 and body["rejected"] == []
    assert {"sources", "generate", "save"} <= body["timings_ms"].keys()
    assert {q["review_state"] for q in body["questions"]} == {"pending"}
    for question in body["questions"][:2]:
        response = await api.http.post(
            url(course, f"/{question['id']}/review"), json={"action": "approve"}, headers=course.owner
        )
        assert response.status_code == 200, response.text
    return body["questions"]


async def test_generated_questions_are_listed_with_filters(
    api: Api, course: Course, bank: list[dict]
) -> None:
    assert [q["type"] for q in bank] == ["multiple_choice", "short_answer", "application"]
    mc = bank[0]
    assert sorted(mc["options"]) == sorted([mc["answer"], *mc["distractors"]])
    listed = (await api.http.get(url(course), headers=course.owner)).json()
    assert [q["id"] for q in listed] == [q["id"] for q in bank]

    async def ids(**params: Any) -> list[str]:
        response = await api.http.get(url(course), params=params, headers=course.owner)
        assert response.status_code == 200, response.text
        return [q["id"] for q in response.json()]

    assert await ids(status="review") == [bank[2]["id"]]
    assert await ids(status="active") == [bank[0]["id"], bank[1]["id"]]
    assert await ids(type="short_answer") == [bank[1]["id"]]
    assert await ids(document_id=course.documents["ownership"]) == [q["id"] for q in bank]
    assert await ids(document_id=course.documents["structs"]) == []
    assert await ids(difficulty="easy", limit=1, offset=1) == [bank[1]["id"]]
    assert await ids(difficulty="hard") == []
    assert (
        await api.http.get(url(course), params={"status": "lost"}, headers=course.owner)
    ).status_code == 422


async def test_viewers_see_active_questions_without_answers(
    api: Api, course: Course, bank: list[dict]
) -> None:
    listed = (await api.http.get(url(course), headers=course.viewer)).json()
    assert [q["id"] for q in listed] == [bank[0]["id"], bank[1]["id"]]
    assert all(q["answer"] is None and q["explanation"] is None and q["distractors"] is None for q in listed)
    assert listed[0]["options"] == bank[0]["options"]  # the same fixed order for everyone
    assert (await api.http.get(url(course), params={"status": "review"}, headers=course.viewer)).json() == []
    assert (await api.http.get(url(course, f"/{bank[2]['id']}"), headers=course.viewer)).status_code == 404
    assert (await api.http.get(url(course, f"/{bank[1]['id']}"), headers=course.viewer)).status_code == 200


async def test_only_editors_generate_and_review(api: Api, course: Course, bank: list[dict]) -> None:
    with api.model(ScriptedChat(script=[])):
        response = await api.http.post(url(course, "/generate"), json={"n": 1}, headers=course.viewer)
        assert response.status_code == 403
        response = await api.http.post(url(course, "/generate"), json={"n": 1}, headers=course.stranger)
        assert response.status_code == 404
    review = bank[2]["id"]
    response = await api.http.patch(
        url(course, f"/{review}"), json={"status": "active"}, headers=course.viewer
    )
    assert response.status_code == 403
    response = await api.http.patch(
        url(course, f"/{review}"), json={"status": "active"}, headers=course.owner
    )
    assert response.status_code == 200 and response.json()["status"] == "active"
    viewer_ids = [q["id"] for q in (await api.http.get(url(course), headers=course.viewer)).json()]
    assert review not in viewer_ids  # active, but students study approved items only
    response = await api.http.patch(
        url(course, f"/{review}"), json={"status": "review"}, headers=course.owner
    )
    assert response.json()["status"] == "review" and response.json()["review_state"] == "pending"


async def test_strangers_see_nothing(api: Api, course: Course, bank: list[dict]) -> None:
    for path in ("", f"/{bank[0]['id']}", f"/{bank[0]['id']}/attempts"):
        assert (await api.http.get(url(course, path), headers=course.stranger)).status_code == 404
    with api.model(ScriptedChat(script=[])):
        response = await api.http.post(
            url(course, f"/{bank[0]['id']}/attempts"), json={"answer": "x"}, headers=course.stranger
        )
    assert response.status_code == 404


async def test_attempts_are_graded_and_kept_per_user(api: Api, course: Course, bank: list[dict]) -> None:
    mc, short = bank[0], bank[1]
    with api.model(ScriptedChat(script=[])):  # an option chosen: graded without the model
        response = await api.http.post(
            url(course, f"/{mc['id']}/attempts"), json={"answer": mc["answer"]}, headers=course.viewer
        )
    assert response.status_code == 201, response.text
    attempt = response.json()
    assert attempt["score"] == 1.0 and attempt["verdict"] == "correct" and attempt["graded_by"] == "choice"
    assert attempt["reference_answer"] == mc["answer"]
    assert [c["chunk_id"] for c in attempt["citations"]] == mc["source_chunk_ids"]

    with api.model(ScriptedChat(script=[grade_reply(0.5)])):
        response = await api.http.post(
            url(course, f"/{short['id']}/attempts"),
            json={"answer": f"Not sure, {short['answer']}?"},
            headers=course.viewer,
        )
    assert response.status_code == 201, response.text
    graded = response.json()
    # A partial score on an answer holding the whole reference counts as correct (EvaluatorConfig).
    assert graded["verdict"] == "correct" and graded["graded_by"] == "model"
    assert all(c["document_id"] == course.documents["ownership"] for c in graded["citations"])

    with api.model(ScriptedChat(script=[grade_reply(1.0)])):
        response = await api.http.post(
            url(course, f"/{short['id']}/attempts"), json={"answer": short["answer"]}, headers=course.owner
        )
    assert response.status_code == 201
    mine = (await api.http.get(url(course, f"/{short['id']}/attempts"), headers=course.viewer)).json()
    assert [a["answer"] for a in mine] == [f"Not sure, {short['answer']}?"]  # only the caller's own
    theirs = (await api.http.get(url(course, f"/{short['id']}/attempts"), headers=course.owner)).json()
    assert [a["score"] for a in theirs] == [1.0]
    # Students cannot attempt a question under review.
    with api.model(ScriptedChat(script=[])):
        response = await api.http.post(
            url(course, f"/{bank[2]['id']}/attempts"), json={"answer": "x"}, headers=course.viewer
        )
    assert response.status_code == 404


async def test_model_failure_while_grading_is_a_502(api: Api, course: Course, bank: list[dict]) -> None:
    with api.model(ScriptedChat(script=["no", "still no"])):
        response = await api.http.post(
            url(course, f"/{bank[1]['id']}/attempts"), json={"answer": "moved"}, headers=course.owner
        )
    assert response.status_code == 502


async def test_bad_generation_requests(api: Api, course: Course, make_user: UserFactory) -> None:
    with api.model(None):
        response = await api.http.post(url(course, "/generate"), json={"n": 1}, headers=course.owner)
    assert response.status_code == 503
    with api.model(ScriptedChat(script=[])):
        for body in ({"n": 11}, {"n": 0}, {"types": []}, {"types": ["essay"]}):
            response = await api.http.post(url(course, "/generate"), json=body, headers=course.owner)
            assert response.status_code == 422, body
        unknown = {"document_id": "00000000-0000-0000-0000-000000000000", "n": 1}
        response = await api.http.post(url(course, "/generate"), json=unknown, headers=course.owner)
        assert response.status_code == 404
        response = await api.http.post(
            url(course, "/generate"), json={"section": ["Nope"]}, headers=course.owner
        )
        assert response.status_code == 409
        empty = await create_project(api.http, course.owner, name="empty")
        response = await api.http.post(f"/projects/{empty}/questions/generate", json={}, headers=course.owner)
        assert response.status_code == 409


async def test_questions_outlive_their_deleted_document(
    api: Api, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> None:
    owner = await make_user("archivist")
    project_id = await create_project(api.http, owner, name="short-lived")
    document = await index(api, owner, project_id, "structs.md", STRUCTS)
    with api.model(ScriptedChat(script=[question_reply("What is a tuple struct?")])):
        response = await api.http.post(
            f"/projects/{project_id}/questions/generate",
            json={"document_id": document, "n": 1, "types": ["short_answer"]},
            headers=owner,
        )
    assert response.status_code == 201, response.text
    [question] = response.json()["questions"]
    assert (
        await api.http.delete(f"/projects/{project_id}/documents/{document}", headers=owner)
    ).status_code == 204
    kept = (await api.http.get(f"/projects/{project_id}/questions/{question['id']}", headers=owner)).json()
    assert kept["document_id"] is None and kept["answer"] == question["answer"]
    assert kept["status"] == "archived"  # out of the study queue (migrations/0013_study_items.sql)
    grader = ScriptedChat(script=[grade_reply(1.0)])
    with api.model(grader):
        response = await api.http.post(
            f"/projects/{project_id}/questions/{question['id']}/attempts",
            json={"answer": question["answer"]},
            headers=owner,
        )
    assert response.status_code == 201 and response.json()["verdict"] == "correct"
    assert "Excerpts:" not in grader.prompts[0] and response.json()["citations"] == []


# --- End to end with the real local model (Qwen2.5-Coder-1.5B on llama.cpp) --------------------------


def brief(attempt: dict[str, Any]) -> str:
    keys = ("score", "verdict", "feedback", "missing_points", "timings_ms", "usage")
    return json.dumps(
        {key: attempt[key] for key in keys} | {"cited": [c["chunk_id"] for c in attempt["citations"]]}
    )


@pytest.fixture(scope="module")
async def rust_course(api: Api, make_user: UserFactory, worker: subprocess.Popen[bytes]) -> Course:
    owner = await make_user("rustacean")
    project_id = await create_project(api.http, owner, name="rust book", language="en")
    documents = {}
    for name in ("ch03-01-variables-and-mutability.md", "ch04-01-what-is-ownership.md"):
        documents[name] = await index(api, owner, project_id, name, (RUST_BOOK / "src" / name).read_text())
    return Course(project_id, owner, owner, owner, documents)


async def document_chunks(api: Api, course: Course, document: str) -> list[dict[str, Any]]:
    response = await api.http.get(f"/projects/{course.id}/documents/{document}/chunks", headers=course.owner)
    return response.json()


async def timed_grades(
    api: Api, course: Course, question_id: str, llm: BaseChatModel, answers: dict[str, str]
) -> dict[str, Any]:
    """Each answer graded by `llm` through POST .../attempts as the owner, timed and printed: label ->
    the attempt's JSON."""
    grades = {}
    with api.model(llm):
        for label, answer in answers.items():
            started = time.perf_counter()
            response = await api.http.post(
                url(course, f"/{question_id}/attempts"), json={"answer": answer}, headers=course.owner
            )
            assert response.status_code == 201, response.text
            grades[label] = response.json()
            print(f"\n{label}: {time.perf_counter() - started:.1f} s {brief(grades[label])}")
    return grades


async def test_real_model_generates_valid_grounded_questions_and_grades_them(
    api: Api, rust_course: Course, local_llm: BaseChatModel
) -> None:
    course, document = rust_course, rust_course.documents["ch04-01-what-is-ownership.md"]
    chunks = await document_chunks(api, course, document)
    chunk_ids = {c["id"] for c in chunks}
    with api.model(local_llm):
        started = time.perf_counter()
        response = await api.http.post(
            url(course, "/generate"), json={"document_id": document, "n": 3}, headers=course.owner
        )
        elapsed = time.perf_counter() - started
    assert response.status_code == 201, response.text
    body = response.json()
    made = body["questions"]
    print(f"\ngenerated {len(made)} in {elapsed:.1f} s; rejected {body['rejected']}")
    print(f"timings {body['timings_ms']} usage {body['usage']}")
    for question in made:
        print(
            json.dumps(
                {
                    k: question[k]
                    for k in (
                        "type",
                        "question",
                        "answer",
                        "distractors",
                        "confidence",
                        "support",
                        "status",
                        "source_chunk_ids",
                    )
                }
            )
        )
    assert len(made) >= 2, body
    for question in made:
        assert question["question"].strip() and question["answer"].strip() and question["explanation"].strip()
        assert question["difficulty"] in ("easy", "medium", "hard") and 0 <= question["confidence"] <= 1
        assert question["document_id"] == document
        assert question["source_chunk_ids"] and set(question["source_chunk_ids"]) <= chunk_ids
        if question["type"] == "multiple_choice":
            options = {o.casefold() for o in [question["answer"], *question["distractors"]]}
            assert len(question["distractors"]) == 3 and len(options) == 4

    # Grade an open question: its own reference answer against another question's answer.
    open_questions = [q for q in made if q["type"] != "multiple_choice"] or made
    target = open_questions[0]
    wrong = next(q["answer"] for q in made if q["id"] != target["id"])
    scores = await timed_grades(
        api, course, target["id"], local_llm, {"reference": target["answer"], "wrong": wrong}
    )
    assert scores["reference"]["score"] > scores["wrong"]["score"]
    assert scores["reference"]["verdict"] != "incorrect"


async def test_real_model_grades_a_real_quiz_answer_above_a_wrong_one(
    api: Api, rust_course: Course, local_llm: BaseChatModel
) -> None:
    """A question from the Rust book's own quiz (chapter 3), stored in the bank, graded twice."""
    quiz = tomllib.loads(
        (RUST_BOOK / "quizzes" / "ch03-01-variables-and-mutability-sec1-variables.toml").read_text()
    )
    item = next(q for q in quiz["questions"] if q["type"] == "ShortAnswer")
    course, document = rust_course, rust_course.documents["ch03-01-variables-and-mutability.md"]
    chunks = await document_chunks(api, course, document)
    text, answer = item["prompt"]["prompt"], item["answer"]["answer"]
    embeddings = api.app.state.runtime.retriever.embeddings
    question = draft(
        text,
        answer,
        np.asarray(embeddings.embed_query(text), dtype=np.float32),
        document_id=document,
        explanation=item["context"].strip(),
        confidence=1.0,
        model_confidence=1.0,
        source_chunk_ids=[chunks[0]["id"]],
    )
    stored = await store(api.app, course.id, course.owner.id, question, duplicate_similarity=0.92)
    grades = await timed_grades(api, course, str(stored.id), local_llm, {"right": "mut", "wrong": "const"})
    assert grades["right"]["score"] > grades["wrong"]["score"]
    assert grades["right"]["verdict"] == "correct" and grades["wrong"]["verdict"] == "incorrect"


async def test_real_model_writes_grounded_flashcards(
    api: Api, rust_course: Course, local_llm: BaseChatModel
) -> None:
    course, document = rust_course, rust_course.documents["ch04-01-what-is-ownership.md"]
    chunks = await document_chunks(api, course, document)
    with api.model(local_llm):
        started = time.perf_counter()
        response = await api.http.post(
            url(course, "/generate"),
            json={"document_id": document, "n": 2, "types": ["flashcard"]},
            headers=course.owner,
        )
        elapsed = time.perf_counter() - started
    assert response.status_code == 201, response.text
    cards = response.json()["questions"]
    print(f"\n{len(cards)} flashcards in {elapsed:.1f} s; rejected {response.json()['rejected']}")
    for card in cards:
        print(json.dumps({k: card[k] for k in ("question", "answer", "confidence", "support", "status")}))
    assert cards, response.json()
    for card in cards:
        assert card["type"] == "flashcard" and card["review_state"] == "pending"
        assert card["question"].strip() and card["answer"].strip() and card["distractors"] == []
        assert set(card["source_chunk_ids"]) <= {c["id"] for c in chunks}

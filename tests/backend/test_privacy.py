"""Students' privacy (issue 11 part 4 and the reference-answer rules of part 5), attacked through the API
on the real embedded Postgres: who reads whose evaluations and attempts, when a reference answer is
shown, the attempt limit, deleting one's own threads and history, the forget rule when a membership
ends, and the retention purges (with `0` writing nothing). Multiple-choice attempts are graded exactly,
so no chat model answers here; the fakes that stand in for it are never called unless scripted."""

import json
import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from langchain_core.messages import AIMessage, HumanMessage

from agents.runs.audit import Audit
from backend.deps import CurrentUser, ProjectAccess
from core.jobs.specs import JudgeAnswer, PurgeHistory
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import privacy
from core.store.accounts.projects import Project
from core.store.runs import evaluations, history, threads
from tests.bank import draft, store, unit_vector
from tests.chat_fakes import ListChat
from tests.conftest import Caller, UserFactory, change_runtime, changed_settings, class_project, own_app
from tests.workers.runtime import job_runtime
from workers.jobs.judge import judge_answer_job, purge_query_history

Conn = psycopg.AsyncConnection[dict[str, Any]]
RIGHT, WRONG = "It is moved", "It is copied"


@dataclass
class Class:
    app: FastAPI
    http: httpx.AsyncClient
    project_id: str
    owner: Caller
    editor: Caller
    alice: Caller  # a student (viewer)
    bob: Caller  # another student
    ids: dict[str, uuid.UUID]  # "owner", "editor", "alice", "bob" -> user id

    def url(self, path: str = "") -> str:
        return f"/projects/{self.project_id}{path}"


@pytest.fixture(scope="module")
async def app_http(
    settings: Settings, services: ServiceUrls
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async with own_app(settings, services) as (app, http):
        # Exact grading needs no model, but the agent routes want one configured.
        change_runtime(app, llm=ListChat(responses=[]))
        yield app, http


async def new_class(app_http: tuple[FastAPI, httpx.AsyncClient], make_user: UserFactory) -> Class:
    app, http = app_http
    project_id, owner, editor, alice, bob = await class_project(http, make_user, "privacy")
    names = {"owner": owner, "editor": editor, "alice": alice, "bob": bob}
    ids = {name: caller.id for name, caller in names.items()}
    return Class(app, http, project_id, owner, editor, alice, bob, ids)


@pytest.fixture(scope="module")
async def runtime(settings: Settings, services: ServiceUrls) -> AsyncIterator[Runtime]:
    """The worker's runtime, for its jobs run in-process."""
    async with job_runtime(settings, services) as opened:
        yield opened


@pytest.fixture
async def course(app_http: tuple[FastAPI, httpx.AsyncClient], make_user: UserFactory) -> Class:
    return await new_class(app_http, make_user)


async def add_question(
    course: Class, db: Conn, text: str = "What happens to a String assigned to another?"
) -> str:
    item = draft(
        text,
        RIGHT,
        unit_vector(),
        type="multiple_choice",
        distractors=[WRONG, "It is cloned", "It is borrowed"],
        explanation="Assignment moves a String.",
        review_state="approved",  # students study approved items only
    )
    row = await store(course.app, course.project_id, course.ids["owner"], item, duplicate_similarity=0.92)
    return str(row.id)


async def attempt(course: Class, who: Caller, question: str, answer: str) -> httpx.Response:
    return await course.http.post(
        course.url(f"/questions/{question}/attempts"), json={"answer": answer}, headers=who
    )


async def judged_query(course: Class, db: Conn, who: str, question: str) -> uuid.UUID:
    """A query of `who` with a stored evaluation, as the judge job leaves it."""
    query_id = await history.insert_query(
        db,
        project_id=course.project_id,
        user_id=course.ids[who],
        run=history.RunRecord("qa", question, answer=f"answer to {question}", outcome="answered"),
    )
    stored = await evaluations.insert_evaluation(
        db,
        project_id=course.project_id,
        user_id=course.ids[who],
        query_id=query_id,
        claims=[{"claim": f"claim of {question}", "supported": True, "chunk_ids": [1]}],
        groundedness=0.5,
        relevance=1.0,
        hallucination_risk=0.5,
        flagged=False,
        judge_model="fake",
    )
    assert stored is not None and stored.user_id == course.ids[who]
    assert query_id is not None
    return query_id


async def own_thread(course: Class, db: Conn, who: str, question: str) -> uuid.UUID:
    scope = {"project_id": course.project_id, "user_id": course.ids[who]}
    thread = await threads.create_thread(db, **scope, title=question)
    await threads.add_messages(
        db,
        **scope,
        thread_id=thread.id,
        messages=[HumanMessage(content=question), AIMessage(content="ok")],
    )
    return thread.id


async def count(db: Conn, sql: str, *params: Any) -> int:
    row = await (await db.execute(f"SELECT count(*) AS n FROM {sql}", params)).fetchone()
    return row["n"]  # type: ignore[index]


# --- Evaluations and query history -----------------------------------------------------------------


async def test_only_the_asker_and_owners_read_an_evaluations_text(course: Class, db: Conn) -> None:
    await judged_query(course, db, "alice", "alice's secret question")
    await judged_query(course, db, "bob", "bob's secret question")
    url = course.url("/evaluations")
    as_owner = await course.http.get(url, headers=course.owner)
    assert as_owner.json()["scope"] == "project" and len(as_owner.json()["evaluations"]) == 2
    as_editor = await course.http.get(url, headers=course.editor)
    assert as_editor.json()["scope"] == "own" and as_editor.json()["evaluations"] == []
    assert as_editor.json()["summary"] == {"count": 2, "mean_groundedness": 0.5, "flagged_share": 0.0}
    assert "secret" not in as_editor.text
    as_alice = await course.http.get(url, headers=course.alice)
    [mine] = as_alice.json()["evaluations"]
    assert mine["question"] == "alice's secret question" and mine["user_id"] == str(course.ids["alice"])
    assert "bob's" not in as_alice.text and as_alice.json()["summary"]["count"] == 2
    flagged_only = await course.http.get(url, params={"flagged": "false"}, headers=course.bob)
    assert [e["question"] for e in flagged_only.json()["evaluations"]] == ["bob's secret question"]
    # The query history stays the owner's.
    for who in (course.editor, course.alice):
        assert (await course.http.get(course.url("/queries"), headers=who)).status_code == 403
    assert len((await course.http.get(course.url("/queries"), headers=course.owner)).json()) == 2


async def test_a_member_erases_their_own_history(course: Class, db: Conn) -> None:
    alice_query = await judged_query(course, db, "alice", "alice asks")
    await judged_query(course, db, "bob", "bob asks")
    response = await course.http.delete(course.url("/queries/mine"), headers=course.alice)
    assert response.status_code == 204
    assert await count(db, "query_history WHERE id = %s", alice_query) == 0
    row = await (
        await db.execute(
            "SELECT user_id, question, answer, claims FROM rag_evaluations WHERE project_id = %s"
            " AND groundedness = 0.5 ORDER BY user_id NULLS FIRST",
            (course.project_id,),
        )
    ).fetchall()
    assert row[0] == {"user_id": None, "question": "", "answer": "", "claims": []}
    assert row[1]["question"] == "bob asks"  # someone else's is untouched
    summary = (await course.http.get(course.url("/evaluations"), headers=course.owner)).json()["summary"]
    assert summary["count"] == 2  # the score stays in the aggregates
    assert (await course.http.get(course.url("/evaluations"), headers=course.alice)).json()[
        "evaluations"
    ] == []


# --- Attempts and reference answers ---------------------------------------------------------------------


async def test_students_see_the_reference_only_when_done_and_only_their_own_attempts(
    course: Class, db: Conn
) -> None:
    question = await add_question(course, db)
    seen = (await course.http.get(course.url(f"/questions/{question}"), headers=course.alice)).json()
    assert seen["answer"] is None and seen["explanation"] is None and RIGHT in seen["options"]
    editor_view = await course.http.get(course.url(f"/questions/{question}"), headers=course.editor)
    assert editor_view.json()["answer"] == RIGHT  # editors curate the bank

    first = await attempt(course, course.alice, question, WRONG)
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["verdict"] == "incorrect" and body["attempts_left"] == 2
    assert body["reference_answer"] is None and body["explanation"] is None
    assert RIGHT not in first.text  # a wrong option is not told which one was right
    listed = (
        await course.http.get(course.url(f"/questions/{question}/attempts"), headers=course.alice)
    ).json()
    assert [a["answer"] for a in listed] == [WRONG] and listed[0]["reference_answer"] is None

    # Another student, an editor: none of Alice's attempts, and no asking for them.
    assert (
        await course.http.get(course.url(f"/questions/{question}/attempts"), headers=course.bob)
    ).json() == []
    for who in (course.bob, course.editor):
        response = await course.http.get(
            course.url(f"/questions/{question}/attempts"),
            params={"user_id": str(course.ids["alice"])},
            headers=who,
        )
        assert response.status_code == 403
        assert (await course.http.get(course.url("/attempts"), headers=who)).status_code == 403
    # The teacher reads them, one student's or the whole class's.
    hers = await course.http.get(
        course.url(f"/questions/{question}/attempts"),
        params={"user_id": str(course.ids["alice"])},
        headers=course.owner,
    )
    assert [a["answer"] for a in hers.json()] == [WRONG] and hers.json()[0]["reference_answer"] == RIGHT
    everyone = (await course.http.get(course.url("/attempts"), headers=course.owner)).json()
    assert {a["user_id"] for a in everyone} == {str(course.ids["alice"])}

    right = (await attempt(course, course.alice, question, RIGHT)).json()
    assert (
        right["verdict"] == "correct" and right["reference_answer"] == RIGHT and right["attempts_left"] == 1
    )
    listed = (
        await course.http.get(course.url(f"/questions/{question}/attempts"), headers=course.alice)
    ).json()
    assert [a["reference_answer"] for a in listed] == [RIGHT, RIGHT]
    assert (await course.http.get(course.url(f"/questions/{question}"), headers=course.alice)).json()[
        "answer"
    ] is None


async def test_attempts_are_limited_per_student_and_question(course: Class, db: Conn) -> None:
    question = await add_question(course, db)
    for left in (2, 1):
        body = (await attempt(course, course.bob, question, WRONG)).json()
        assert body["attempts_left"] == left and body["reference_answer"] is None
    last = (await attempt(course, course.bob, question, WRONG)).json()
    assert last["attempts_left"] == 0 and last["reference_answer"] == RIGHT  # no try left: shown
    refused = await attempt(course, course.bob, question, RIGHT)
    assert refused.status_code == 409 and "3 attempts" in refused.json()["detail"]
    assert await count(db, "question_attempts WHERE question_id = %s", question) == 3
    # Editors and owners test the grader freely.
    for _ in range(4):
        assert (await attempt(course, course.editor, question, WRONG)).status_code == 201

    # The limit is the owner's to set; null is unlimited.
    url = course.url()
    denied = await course.http.patch(url, json={"max_attempts_per_question": 10}, headers=course.editor)
    assert denied.status_code == 403
    assert (await course.http.patch(url, json={"name": "renamed"}, headers=course.editor)).status_code == 200
    one = await course.http.patch(url, json={"max_attempts_per_question": 1}, headers=course.owner)
    assert one.json()["max_attempts_per_question"] == 1
    other = await add_question(course, db, "Which trait copies a value bit for bit?")
    assert (await attempt(course, course.alice, other, WRONG)).json()["reference_answer"] == RIGHT
    assert (await attempt(course, course.alice, other, WRONG)).status_code == 409
    unlimited = await course.http.patch(url, json={"max_attempts_per_question": None}, headers=course.owner)
    assert unlimited.json()["max_attempts_per_question"] is None
    again = (await attempt(course, course.bob, question, WRONG)).json()
    assert again["attempts_left"] is None and again["reference_answer"] == RIGHT
    for bad in (0, -1, "many"):
        response = await course.http.patch(url, json={"max_attempts_per_question": bad}, headers=course.owner)
        assert response.status_code == 422


# --- Threads ------------------------------------------------------------------------------------------


async def test_a_member_deletes_their_own_thread_and_nobody_elses(course: Class, db: Conn) -> None:
    thread = await own_thread(course, db, "alice", "alice's private question")
    url = course.url(f"/qa/threads/{thread}")
    for who in (course.bob, course.owner, course.editor):
        assert (await course.http.get(url, headers=who)).status_code == 404
        assert (await course.http.delete(url, headers=who)).status_code == 404
    assert await count(db, "qa_messages WHERE session_id = %s", thread) == 2
    assert (await course.http.delete(url, headers=course.alice)).status_code == 204
    assert (await course.http.get(url, headers=course.alice)).status_code == 404
    assert await count(db, "qa_messages WHERE session_id = %s", thread) == 0
    assert (await course.http.delete(url, headers=course.alice)).status_code == 404


# --- The forget rule --------------------------------------------------------------------------------------


async def test_removing_a_member_deletes_or_anonymises_their_rows(course: Class, db: Conn) -> None:
    question = await add_question(course, db)
    assert (await attempt(course, course.alice, question, WRONG)).status_code == 201
    assert (await attempt(course, course.bob, question, WRONG)).status_code == 201
    thread = await own_thread(course, db, "alice", "alice's thread")
    query = await judged_query(course, db, "alice", "alice's question")
    await judged_query(course, db, "bob", "bob's question")
    alice = course.ids["alice"]

    response = await course.http.delete(course.url(f"/members/{alice}"), headers=course.owner)
    assert response.status_code == 204, response.text
    assert await count(db, "qa_threads WHERE id = %s", thread) == 0
    assert await count(db, "qa_messages WHERE session_id = %s", thread) == 0
    assert (
        await count(db, "question_attempts WHERE project_id = %s AND user_id = %s", course.project_id, alice)
        == 0
    )
    kept = await (
        await db.execute("SELECT user_id, question, answer FROM query_history WHERE id = %s", (query,))
    ).fetchone()
    assert kept == {"user_id": None, "question": "", "answer": None}
    assert (
        await count(
            db, "rag_evaluations WHERE project_id = %s AND question LIKE 'alice%%'", course.project_id
        )
        == 0
    )
    # Bob's rows are untouched, and the class's aggregates keep Alice's scores.
    assert await count(db, "question_attempts WHERE project_id = %s", course.project_id) == 1
    summary = (await course.http.get(course.url("/evaluations"), headers=course.owner)).json()
    assert summary["summary"]["count"] == 2 and [
        e["question"] for e in summary["evaluations"] if e["question"]
    ] == ["bob's question"]
    assert (await course.http.get(course.url(), headers=course.alice)).status_code == 404


async def test_the_rule_holds_whoever_deletes_the_membership(course: Class, db: Conn) -> None:
    """Leaving, or a membership row deleted in plain SQL: the trigger forgets all the same; calling the
    rule again changes nothing."""
    thread = await own_thread(course, db, "bob", "bob's thread")
    query = await judged_query(course, db, "bob", "bob's question")
    bob = course.ids["bob"]
    await db.execute(
        "DELETE FROM project_members WHERE project_id = %s AND user_id = %s", (course.project_id, bob)
    )
    assert await count(db, "qa_threads WHERE id = %s", thread) == 0
    assert await count(db, "query_history WHERE id = %s AND user_id IS NULL AND question = ''", query) == 1
    await privacy.forget_member(db, course.project_id, bob)
    assert await count(db, "query_history WHERE id = %s", query) == 1
    leaving = await course.http.delete(course.url(f"/members/{course.ids['alice']}"), headers=course.alice)
    assert leaving.status_code == 204


# --- Retention ------------------------------------------------------------------------------------------


async def test_each_table_is_purged_by_its_own_retention(runtime: Runtime, course: Class, db: Conn) -> None:
    question = await add_question(course, db)
    assert (await attempt(course, course.alice, question, WRONG)).status_code == 201
    assert (await attempt(course, course.alice, question, WRONG)).status_code == 201
    old_thread, new_thread = [await own_thread(course, db, "alice", f"thread {n}") for n in range(2)]
    old_query, new_query = [await judged_query(course, db, "alice", f"query {n}") for n in range(2)]
    aged = {
        "qa_threads": ("updated_at", "id = %s", old_thread),
        "question_attempts": (
            "created_at",
            "id = (SELECT id FROM question_attempts WHERE question_id = %s ORDER BY created_at LIMIT 1)",
            question,
        ),
        "rag_evaluations": ("created_at", "query_id = %s", old_query),
        "query_history": ("created_at", "id = %s", old_query),
    }
    for table, (column, where, key) in aged.items():
        await db.execute(f"UPDATE {table} SET {column} = now() - interval '8 days' WHERE {where}", (key,))
    windows = {
        "query_history_retention_days": 30,  # the history keeps its 8-day-old row
        "qa_thread_retention_days": 7,
        "attempt_retention_days": 7,
        "evaluation_retention_days": 7,
    }
    purging = replace(runtime, settings=runtime.settings.with_values(windows))
    outcome = await purge_query_history(purging, PurgeHistory())
    assert outcome["purged"]["qa_threads"] >= 1 and outcome["purged"]["rag_evaluations"] >= 1
    assert await count(db, "qa_threads WHERE id = %s", old_thread) == 0
    assert await count(db, "qa_messages WHERE session_id = %s", old_thread) == 0
    assert await count(db, "qa_threads WHERE id = %s", new_thread) == 1
    assert await count(db, "question_attempts WHERE question_id = %s", question) == 1
    assert await count(db, "rag_evaluations WHERE query_id = ANY(%s)", [old_query, new_query]) == 1
    assert await count(db, "query_history WHERE id = ANY(%s)", [old_query, new_query]) == 2


async def test_retention_zero_writes_nothing(runtime: Runtime, course: Class, db: Conn) -> None:
    question = await add_question(course, db)
    zero = {"qa_thread_retention_days": 0, "attempt_retention_days": 0, "evaluation_retention_days": 0}
    planner = json.dumps(
        {"question": "", "terms": [], "document": "", "ambiguous": False, "clarification": ""}
    )
    with changed_settings(course.app, **zero):
        # QA answers (here: nothing indexed, so "not found" after the planner) and keeps no thread.
        change_runtime(course.app, llm=ListChat(responses=[AIMessage(content=planner)]))
        asked = await course.http.post(
            course.url("/qa"), json={"question": "What is a move?"}, headers=course.alice
        )
        assert asked.status_code == 200, asked.text
        assert asked.json()["thread_id"] is None
        follow_up = {"question": "And then?", "thread_id": str(uuid.uuid4())}
        assert (
            await course.http.post(course.url("/qa"), json=follow_up, headers=course.alice)
        ).status_code == 422
        # An attempt is graded and returned, not stored; with nothing to count, the reference comes with it.
        graded = await attempt(course, course.alice, question, WRONG)
        assert graded.status_code == 201 and graded.json()["id"] is None
        assert graded.json()["reference_answer"] == RIGHT and graded.json()["attempts_left"] is None
    assert await count(db, "qa_threads WHERE project_id = %s", course.project_id) == 0
    assert await count(db, "question_attempts WHERE question_id = %s", question) == 0

    # No evaluation: a sampled answer is not queued (it is with a retention), the judge job writes nothing.
    class Queue:
        def __init__(self) -> None:
            self.calls: list[Any] = []

        async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
            self.calls.append(args)

    access = ProjectAccess(
        project=Project(
            id=uuid.UUID(course.project_id),
            name="course",
            description="",
            language="auto",
            groundedness_sample_rate=None,
            max_attempts_per_question=None,
            students_study_own_items=False,
            exam_date=None,
            created_at=datetime.now(UTC),
            updated_at=datetime.now(UTC),
            role="viewer",
        ),
        user=CurrentUser(id=course.ids["alice"], email=course.alice.email),
    )
    queued = {}
    for days in (90, 0):
        settings = course.app.state.runtime.settings.with_values(
            {"EVALUATION_RETENTION_DAYS": days, "GROUNDEDNESS_SAMPLE_RATE": 1.0}
        )
        queue = Queue()
        audit = Audit("req", course.app.state.runtime.pool, settings, queue, None, random.Random(0))  # type: ignore[arg-type]
        query_id = await audit.record(
            access, history.RunRecord("qa", "q", answer="a", outcome="answered"), judge=True
        )
        assert query_id is not None
        queued[days] = len(queue.calls)
    assert queued == {90: 1, 0: 0}
    skipped = await judge_answer_job(
        replace(runtime, llm=object(), settings=settings),
        JudgeAnswer(uuid.UUID(course.project_id), course.ids["alice"], query_id),
    )
    assert skipped["status"] == "skipped"
    assert await count(db, "rag_evaluations WHERE query_id = %s", query_id) == 0

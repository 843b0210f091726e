"""The audit trail through the API with a scripted fake chat model: the QA request's log line, its
query_history row (owners only), the sampled groundedness judgement (the job called in-process with a
scripted judge), the evaluations summary, sampling rates and the retention purge."""

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import httpx
import psycopg
import pytest
from arq.jobs import Job
from fastapi import FastAPI
from langchain_core.messages import AIMessage

from core.jobs.specs import AGENT_QUEUE, JudgeAnswer, PurgeHistory
from core.llm.reply_cache import ReplyCache
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.runs import history
from tests.backend.conftest import OwnApps
from tests.chat_fakes import ListChat
from tests.conftest import (
    Caller,
    UserFactory,
    add_member,
    change_runtime,
    changed_runtime,
    changed_settings,
    create_project,
    upload,
    wait_for_job,
)
from tests.workers.runtime import job_runtime
from workers.jobs.judge import judge_answer_job, purge_query_history

CONSTANTS = (
    "Constants are values bound to a name that are never allowed to change. They are declared with the"
    " const keyword instead of let, and the type of the value must always be annotated."
)
SOURCE = (
    f"# Constants\n\n{CONSTANTS} Constants may be declared in any scope, including the global scope, which"
    " makes them useful for values that many parts of the code need to know about. They may be set only to"
    " a constant expression, not to the result of a value computed at runtime. Rust's naming convention"
    " for constants is all upper case with underscores between words.\n"
)
QUESTION = "How are constants declared with the const keyword?"
Conn = psycopg.AsyncConnection[dict[str, Any]]
T = TypeVar("T")


@dataclass
class Course:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    owner_id: uuid.UUID
    editor: Caller
    project_id: str
    chunk_id: int


@pytest.fixture(scope="module")
async def course(own_apps: OwnApps) -> AsyncIterator[Course]:
    # The judge is tested on answers that the QA's own support check would withhold: off here.
    async with own_apps.open(own_apps.settings.with_values({"QA_SUPPORT_MIN": 0.0})) as (app, http):
        owner, editor = await own_apps.make_user("audit-owner"), await own_apps.make_user("audit-editor")
        project_id = await create_project(http, owner, name="Rust constants", language="en")
        await add_member(http, owner, project_id, editor, "editor")
        response = await upload(http, owner, project_id, "constants.md", SOURCE.encode())
        assert response.status_code == 202, response.text
        job = await wait_for_job(http, owner, project_id, response.json()["job_id"])
        assert job["status"] == "succeeded", job
        url = f"/projects/{project_id}/documents/{response.json()['document_id']}/chunks"
        (chunk,) = (await http.get(url, headers=owner)).json()
        yield Course(app, http, owner, owner.id, editor, project_id, chunk["id"])


@pytest.fixture(scope="module")
async def runtime(settings: Settings, services: ServiceUrls) -> AsyncIterator[Runtime]:
    """The worker's runtime, for its jobs run in-process."""
    async with job_runtime(settings, services) as opened:
        yield opened


def reply(**fields: Any) -> AIMessage:
    return AIMessage(content=json.dumps(fields))


async def ask(course: Course, answer: str, **headers: str) -> httpx.Response:
    change_runtime(
        course.app,
        llm=ListChat(responses=[reply(has_answer=True, answer=answer, used_chunk_ids=[course.chunk_id])]),
    )
    url = f"/projects/{course.project_id}/qa"
    return await course.http.post(url, json={"question": QUESTION}, headers={**course.owner, **headers})


async def query_for(course: Course, request_id: str) -> dict[str, Any]:
    listed = await course.http.get(f"/projects/{course.project_id}/queries", headers=course.owner)
    assert listed.status_code == 200, listed.text
    return next(q for q in listed.json() if q["request_id"] == request_id)


async def judge_job(course: Course, query_id: str) -> dict[str, Any] | None:
    info = await Job(f"judge:{query_id}", course.app.state.runtime.redis, _queue_name=AGENT_QUEUE).info()
    return None if info is None else {"function": info.function, "args": info.args}


async def run_judge(runtime: Runtime, course: Course, query_id: str, verdicts: list[str]) -> dict[str, Any]:
    """The worker's job function in-process, with a scripted judge model: its yes/no per claim that
    gets as far as a model call."""
    replies = [AIMessage(content=json.dumps({"verdict": v})) for v in verdicts]
    # The scripted model gives no log-probabilities, so the contrast check (tested on its own in
    # tests/agents/test_groundedness_contrast.py) could only abstain, yet would use up scripted replies.
    settings = runtime.settings.with_values({"GROUNDEDNESS_CONTRAST_CHECK": False})
    # The job's model calls go through the runtime's admission, on the app's Redis.
    scripted = replace(runtime, settings=settings, llm=ListChat(responses=replies))
    args = JudgeAnswer(uuid.UUID(course.project_id), course.owner_id, uuid.UUID(query_id))
    return await judge_answer_job(scripted, args)


async def judge_row(db: Conn, query_id: str) -> dict[str, Any]:
    cur = await db.execute(
        "SELECT kind, status, query_id::text, created_by, error, result FROM jobs WHERE id = %s",
        (f"judge:{query_id}",),
    )
    row = await cur.fetchone()
    assert row is not None, query_id
    return row


async def polled_until(
    read: Callable[[], Awaitable[T]], done: Callable[[T], bool], timeout_s: float = 60.0
) -> T:
    """`read()` every 0.1 s until its value is `done`; fails the test with the last value past the timeout."""
    deadline = time.monotonic() + timeout_s
    while not done(value := await read()):
        assert time.monotonic() < deadline, value
        await asyncio.sleep(0.1)
    return value


async def judge_row_when(db: Conn, query_id: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return await polled_until(lambda: judge_row(db, query_id), done)


async def jobs_count(db: Conn, where: str, *params: object) -> int:
    cur = await db.execute(f"SELECT count(*) AS n FROM jobs WHERE {where}", params)
    return int((await cur.fetchone())["n"])  # type: ignore[index]


async def test_qa_request_is_logged_recorded_and_its_judgement_stored(
    runtime: Runtime, course: Course, db: Conn, caplog: pytest.LogCaptureFixture
) -> None:
    answer = (
        "Constants are declared with the const keyword. They also run on the GPU at night."
        " The GPU evaluates them. The GPU stores them in a cache."
    )
    with changed_settings(course.app, groundedness_sample_rate=1.0), caplog.at_level(logging.INFO):
        response = await ask(course, answer, **{"X-Request-ID": "audit-qa-1"})
    assert response.status_code == 200, response.text
    assert response.headers["X-Request-ID"] == "audit-qa-1" == response.json()["request_id"]

    # One JSON line for the request: ids, stage timings and tokens per model; no document text.
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "studyai.requests"]
    (line,) = [line for line in lines if line["event"] == "qa"]
    assert line["request_id"] == "audit-qa-1" and line["outcome"] == "answered" and line["judge_sampled"]
    assert {"planning", "retrieval", "generation", "total"} <= set(line["timings_ms"])
    (usage,) = line["tokens"].values()
    assert usage["calls"] == 1  # a standalone question: the answer alone (no planner call, no self-check)
    assert CONSTANTS[:40] not in caplog.text and "never allowed to change" not in caplog.text

    # The history row, for the owner only.
    query = await query_for(course, "audit-qa-1")
    assert query["agent"] == "qa" and query["question"] == QUESTION and query["answer"] == answer
    assert query["cited_chunk_ids"] == [course.chunk_id] and course.chunk_id in query["retrieved_chunk_ids"]
    assert query["run_id"] == line["run_id"] and query["evaluation"] is None
    assert query["timings_ms"]["total"] > 0 and query["tokens"] == line["tokens"]
    # The answer's confidence, as the asker was shown it, stays with the row (and the log line's label).
    shown = response.json()["confidence"]
    assert shown["reason"] is None  # a calibrated answer: its label is its probability's
    assert query["confidence"] == shown and query["confidence"]["label"]
    assert line["confidence_label"] == query["confidence"]["label"]

    # Sampled at rate 1: the judge job was queued with the query id, its jobs row stored with the query.
    # The session's worker has no chat model: it fails the row with that reason (waited for, so that its
    # attempt never overlaps the one below); a failed row runs again. Judged, the claim about the GPU fails.
    job = await judge_job(course, query["id"])
    assert job is not None and job["function"] == "judge_answer" and query["id"] in job["args"]
    row = await judge_row(db, query["id"])
    assert row["kind"] == "judge" and row["query_id"] == query["id"] and row["created_by"] == course.owner_id
    row = await judge_row_when(db, query["id"], lambda r: r["status"] == "failed")
    assert "No chat model is configured" in row["error"]
    verdicts = ["yes", "no", "no", "no"]  # the GPU claims are not in the chunk: few reach the model
    with caplog.at_level(logging.INFO, logger="workers.jobs.judge"):
        outcome = await run_judge(runtime, course, query["id"], verdicts)
    assert outcome["status"] == "judged" and outcome["flagged"] is True
    warning = next(
        r for r in caplog.records if r.name == "workers.jobs.judge" and r.levelno == logging.WARNING
    )
    assert json.loads(warning.getMessage())["hallucination_risk"] == 0.75
    judged = (await query_for(course, "audit-qa-1"))["evaluation"]
    assert judged["id"] == outcome["evaluation_id"] and judged["flagged"] is True
    assert judged["groundedness"] == 0.25 and [c["supported"] for c in judged["claims"]] == [
        True, False, False, False
    ]  # fmt: skip
    row = await judge_row(db, query["id"])
    assert row["status"] == "succeeded" and row["error"] is None
    assert row["result"] == {"status": "judged", "evaluation_id": judged["id"], "flagged": True}
    # A second run of the same job (arq retry) writes nothing more, and its row stays as it was.
    assert (await run_judge(runtime, course, query["id"], verdicts))["status"] == "skipped"
    assert await judge_row(db, query["id"]) == row


async def test_a_supported_answer_is_not_flagged(runtime: Runtime, course: Course, db: Conn) -> None:
    with changed_settings(course.app, groundedness_sample_rate=1.0):
        response = await ask(course, "With the const keyword.", **{"X-Request-ID": "audit-qa-2"})
    query = await query_for(course, response.headers["X-Request-ID"])
    await judge_row_when(db, query["id"], lambda r: r["status"] == "failed")  # the model-less worker's try
    outcome = await run_judge(runtime, course, query["id"], ["yes"])
    assert outcome["status"] == "judged" and outcome["flagged"] is False


async def test_a_kept_reply_answers_the_same_question_and_is_not_judged_again(course: Course) -> None:
    """A plain (not streamed) QA call keeps its reply too: the same question answers with it, without the
    model (the second scripted model has no reply to give), and it is not sampled again for the judge."""
    app = course.app
    kept = ReplyCache(app.state.runtime.redis, 60)
    with changed_settings(app, groundedness_sample_rate=1.0), changed_runtime(app, replies=kept):
        first = await ask(course, "A const is declared with the const keyword.")
        change_runtime(app, llm=ListChat(responses=[]))
        url = f"/projects/{course.project_id}/qa"
        again = await course.http.post(url, json={"question": QUESTION}, headers=course.owner)
    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["answer"] == first.json()["answer"] == "A const is declared with the const keyword."
    assert again.json()["citations"] == first.json()["citations"]
    first_query = await query_for(course, first.headers["X-Request-ID"])
    again_query = await query_for(course, again.headers["X-Request-ID"])
    assert await judge_job(course, first_query["id"]) is not None  # sampled at rate 1
    assert await judge_job(course, again_query["id"]) is None  # the same reply: not judged twice
    assert again_query["tokens"] == {} and again_query["timings_ms"]["reply_cached"] == 1.0


async def test_rate_zero_and_the_project_override_are_honoured(course: Course) -> None:
    project_url = f"/projects/{course.project_id}"
    with changed_settings(course.app, groundedness_sample_rate=0.0):
        none = await ask(course, "With the const keyword.")
        assert await judge_job(course, (await query_for(course, none.headers["X-Request-ID"]))["id"]) is None
        # The project's own rate wins over the setting, and null goes back to the setting.
        patched = await course.http.patch(
            project_url, json={"groundedness_sample_rate": 1.0}, headers=course.owner
        )
        assert patched.status_code == 200 and patched.json()["groundedness_sample_rate"] == 1.0
        some = await ask(course, "With the const keyword.")
        assert (
            await judge_job(course, (await query_for(course, some.headers["X-Request-ID"]))["id"]) is not None
        )
        reset = await course.http.patch(
            project_url, json={"groundedness_sample_rate": None}, headers=course.owner
        )
        assert reset.json()["groundedness_sample_rate"] is None
    bad = await course.http.patch(project_url, json={"groundedness_sample_rate": 1.5}, headers=course.owner)
    assert bad.status_code == 422


async def test_no_answer_is_sampled_while_the_projects_judge_backlog_is_full(
    course: Course, db: Conn, caplog: pytest.LogCaptureFixture
) -> None:
    """GROUNDEDNESS_BACKLOG_MAX bounds a project's queued judgements: at the bound a sampled answer gets
    no judge job (its log line says so), and once the judge catches up sampling goes on."""
    with changed_settings(course.app, groundedness_sample_rate=0.0):
        held = await query_for(course, (await ask(course, "With the const keyword.")).headers["X-Request-ID"])
    # The judgements earlier tests sampled leave the queue first (the model-less worker fails them), so
    # that the row below is the project's only queued one.
    queued_judgements = "project_id = %s AND kind = 'judge' AND status = 'queued'"
    await polled_until(
        lambda: jobs_count(db, queued_judgements, course.project_id), lambda queued: queued == 0
    )
    # A judgement that stays queued (its row only: the session's worker never hears of it).
    await db.execute(
        "INSERT INTO jobs (id, project_id, kind, query_id, created_by) VALUES (%s, %s, 'judge', %s, %s)",
        (f"judge:{held['id']}", course.project_id, held["id"], course.owner_id),
    )
    try:
        with (
            changed_settings(course.app, groundedness_sample_rate=1.0, groundedness_backlog_max=1),
            caplog.at_level(logging.INFO),
        ):
            full = await ask(course, "With the const keyword.")
            (line,) = [
                json.loads(r.getMessage())
                for r in caplog.records
                if r.name == "studyai.requests" and '"event": "qa"' in r.getMessage()
            ]
            assert line["judge_sampled"] is False and line["judge_backlog_full"] is True
            unjudged = await query_for(course, full.headers["X-Request-ID"])
            assert await judge_job(course, unjudged["id"]) is None
            assert await jobs_count(db, "query_id = %s", unjudged["id"]) == 0

            await db.execute("UPDATE jobs SET status = 'succeeded' WHERE id = %s", (f"judge:{held['id']}",))
            caught_up = await ask(course, "With the const keyword.")
            judged = await query_for(course, caught_up.headers["X-Request-ID"])
            assert await judge_job(course, judged["id"]) is not None
            assert await jobs_count(db, "query_id = %s", judged["id"]) == 1
    finally:
        await db.execute("DELETE FROM jobs WHERE id = %s", (f"judge:{held['id']}",))


async def test_history_is_for_owners_only(course: Course, make_user: UserFactory) -> None:
    url = f"/projects/{course.project_id}/queries"
    assert (await course.http.get(url, headers=course.editor)).status_code == 403
    assert (await course.http.get(url, headers=await make_user("outsider"))).status_code == 404
    assert (await course.http.get(url, params={"agent": "nope"}, headers=course.owner)).status_code == 422


async def test_a_note_request_leaves_a_writer_row_and_a_log_line(
    course: Course, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="studyai.requests"):
        response = await course.http.post(
            f"/projects/{course.project_id}/notes", json={"topic": "constants"}, headers=course.editor
        )
    assert response.status_code == 202, response.text
    rid = response.headers["X-Request-ID"]
    (line,) = [json.loads(r.getMessage()) for r in caplog.records if r.name == "studyai.requests"
               and json.loads(r.getMessage())["event"] == "writer"]  # fmt: skip
    assert line["request_id"] == rid and line["job_id"] == response.json()["job_id"]
    query = await query_for(course, rid)
    assert query["agent"] == "writer" and query["question"] == "constants" and query["outcome"] == "queued"


async def test_retention_zero_writes_no_history(course: Course, db: Conn) -> None:
    with changed_settings(course.app, query_history_retention_days=0, groundedness_sample_rate=1.0):
        response = await ask(course, "With the const keyword.")
    assert response.status_code == 200
    cur = await db.execute(
        "SELECT count(*) AS n FROM query_history WHERE request_id = %s", (response.headers["X-Request-ID"],)
    )
    assert (await cur.fetchone())["n"] == 0  # type: ignore[index]


async def test_purge_deletes_rows_older_than_the_retention_and_keeps_newer(
    runtime: Runtime, course: Course, db: Conn
) -> None:
    ids = [
        await history.insert_query(
            db,
            project_id=course.project_id,
            user_id=course.owner_id,
            run=history.RunRecord("qa", f"purge {n}"),
        )
        for n in range(3)
    ]
    await db.execute(
        "UPDATE query_history SET created_at = now() - make_interval(days => %s) WHERE id = %s", (31, ids[0])
    )
    await db.execute(
        "UPDATE query_history SET created_at = now() - make_interval(days => %s) WHERE id = %s", (29, ids[1])
    )

    async def remaining() -> set[uuid.UUID]:
        cur = await db.execute("SELECT id FROM query_history WHERE id = ANY(%s)", (ids,))
        return {row["id"] for row in await cur.fetchall()}

    thirty = runtime.settings.with_values({"QUERY_HISTORY_RETENTION_DAYS": 30})
    outcome = await purge_query_history(replace(runtime, settings=thirty), PurgeHistory())
    assert outcome["deleted"] >= 1 and await remaining() == {ids[1], ids[2]}
    # Retention 0 keeps nothing (run last: it empties the whole table).
    zero = thirty.with_values({"QUERY_HISTORY_RETENTION_DAYS": 0})
    await purge_query_history(replace(runtime, settings=zero), PurgeHistory())
    assert await remaining() == set()

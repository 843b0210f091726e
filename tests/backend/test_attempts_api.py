"""Provisional grades through the API on the real embedded Postgres (issue 28, grading): a model grade
the calibration labels low waits for the teacher. It counts against the attempt limit but shows no
reference answer, moves no mastery and makes no study review until an owner confirms or corrects it;
then it does. Only the project's owners list and review them, and the SQL says so too. High and medium
grades are settled as before.

The chat model is scripted (tests/agents/helpers.ScriptedChat: the grade's JSON, the verdict check
answered aside); the app's calibration is one whose "grade" label follows the grader's own score: 0.5
is low, 0.55 medium, 1.0 high (core/confidence/model.py)."""

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI

from core.confidence import Calibration
from core.confidence.source import PinnedCalibration
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.sql.listing import Page
from core.store.study import attempts
from tests.agents.helpers import ScriptedChat
from tests.backend.classroom import T0, Classroom
from tests.bank import draft, store, unit_vector
from tests.conftest import Caller, UserFactory, change_runtime, create_project, own_app
from tests.label_models import one_signal

Conn = psycopg.AsyncConnection[dict[str, Any]]
REFERENCE = "The value is dropped and its memory is freed"
# Right, and not in the reference's words: its label is the calibration's, while an answer saying what
# the reference says is high whatever the grader's own score (agents/question_evaluator/confidence.py).
ANSWER = "Once out of scope it gets dropped, so the memory goes back to the allocator."
NOTE_EN = "Provisional — your teacher will check this grade."
# The grader's own score decides the label: p = sigmoid(4 * (model_score - 0.5) / 0.25).
CALIBRATION = Calibration(
    "test-chat",
    "test-embedding",
    {"grade": one_signal("model_score", mean=0.5, scale=0.25, weight=4.0, high_min=0.8, low_below=0.6)},
)
LOW, MEDIUM, HIGH = 0.5, 0.55, 1.0


def grade(score: float) -> str:
    """The grader's reply. An answer holding the whole reference, scored from 0.35, is correct
    (EvaluatorConfig.partial_is_correct_from): a low 0.5 is a provisional "correct"."""
    return json.dumps(
        {"feedback": "Right idea.", "missing": [], "verdict": "correct", "score": score, "used": []}
    )


@dataclass
class Course(Classroom):
    items: list[str] = field(default_factory=list)

    async def attempt(
        self, who: Caller, item: str, model_score: float, expect: int = 201, answer: str = ANSWER
    ) -> Any:
        self.app.state.runtime = replace(
            self.app.state.runtime, llm=ScriptedChat(script=[grade(model_score)])
        )
        attempt = await self.post(f"/questions/{item}/attempts", who, {"answer": answer}, expect)
        self.clock.now += timedelta(minutes=1)
        return attempt

    async def review(self, who: Caller, attempt_id: str, expect: int = 200, **body: Any) -> Any:
        return await self.post(f"/attempts/{attempt_id}/review", who, body, expect)


@pytest.fixture(scope="module")
async def app_http(
    settings: Settings, services: ServiceUrls
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async with own_app(settings, services) as (app, http):
        change_runtime(app, calibrations=PinnedCalibration(CALIBRATION))
        yield app, http


@pytest.fixture
async def course(app_http: tuple[FastAPI, httpx.AsyncClient], make_user: UserFactory) -> Course:
    app, http = app_http
    course = await Course.open(app, http, make_user, "provisional")
    for i in range(2):
        course.items.append(await add_item(course, f"What happens to a value when its owner goes, case {i}?"))
    return course


async def add_item(course: Course, text: str) -> str:
    item = draft(text, REFERENCE, unit_vector(), section_path=["Book", "Ownership"])
    row = await store(course.app, course.project_id, course.owner.id, item, review_state="approved")
    return str(row.id)


async def study_reviews(db: Conn, course: Course, who: Caller) -> list[dict[str, Any]]:
    rows = await db.execute(
        "SELECT question_id, rating, source FROM study_reviews WHERE project_id = %s AND user_id = %s"
        " ORDER BY reviewed_at",
        (course.project_id, who.id),
    )
    return await rows.fetchall()


async def ownership(course: Course, who: Caller) -> dict[str, Any]:
    topics = (await course.get("/mastery", who))["topics"]
    return next(t for t in topics if t["topic"] == ["Book", "Ownership"])


async def test_a_low_grade_waits_for_the_owner_who_confirms_it(course: Course, db: Conn) -> None:
    item = course.items[0]
    graded = await course.attempt(course.alice, item, LOW)
    assert (graded["status"], graded["verdict"], graded["score"]) == ("provisional", "correct", 0.75)
    assert graded["confidence"]["label"] == "low" and graded["confidence"]["signals"]["model_score"] == LOW
    assert graded["feedback"] == f"{NOTE_EN} Right idea."
    # A provisional "correct" is not done: the reference stays hidden; the attempt counts.
    assert graded["reference_answer"] is None and graded["explanation"] is None
    assert graded["attempts_left"] == 2
    mine = await course.get(f"/questions/{item}/attempts", course.alice)
    assert [(a["id"], a["status"], a["reference_answer"]) for a in mine] == [
        (graded["id"], "provisional", None)
    ]
    assert mine[0]["feedback"].startswith(NOTE_EN)
    # No study review, and mastery ignores it.
    assert await study_reviews(db, course, course.alice) == []
    before = await ownership(course, course.alice)
    assert (before["studied"], before["attempts"], before["mastery"]) == (0, 0, 0)

    queue = await course.get("/attempts/provisional", course.owner)
    assert len(queue) == 1
    waiting = queue[0]
    assert waiting["id"] == graded["id"] and waiting["student_email"] == course.alice.email
    assert (
        waiting["question"].startswith("What happens to a value") and waiting["reference_answer"] == REFERENCE
    )
    assert (waiting["answer"], waiting["model_verdict"], waiting["model_score"]) == (
        ANSWER,
        "correct",
        0.75,
    )
    assert waiting["confidence"]["label"] == "low"
    assert waiting["feedback"] == "Right idea."  # the teacher reads the grader's own feedback

    confirmed = await course.review(course.owner, graded["id"], verdict="correct")
    assert (confirmed["status"], confirmed["verdict"], confirmed["score"]) == ("confirmed", "correct", 0.75)
    assert confirmed["reviewed_by"] == str(course.owner.id)
    # Now it is the student's review of the item (correct at the first try, below Easy's score: Good).
    assert await study_reviews(db, course, course.alice) == [
        {"question_id": uuid.UUID(item), "rating": 3, "source": "attempt"}
    ]
    after = await ownership(course, course.alice)
    assert (after["studied"], after["attempts"]) == (1, 1) and after["mastery"] > 0
    mine = await course.get(f"/questions/{item}/attempts", course.alice)
    assert (mine[0]["status"], mine[0]["reference_answer"], mine[0]["feedback"]) == (
        "confirmed",
        REFERENCE,
        "Right idea.",
    )
    # Reviewed once: a second review is a conflict, and the queue is empty.
    await course.review(course.owner, graded["id"], expect=409, verdict="incorrect")
    assert await course.get("/attempts/provisional", course.owner) == []
    # The project's audit log has the owner's review, without the student's text.
    events = await course.get("/audit", course.owner)
    reviewed = [e for e in events if e["action"] == "attempt.reviewed"]
    assert len(reviewed) == 1 and reviewed[0]["target_user_id"] == str(course.alice.id)
    assert reviewed[0]["target_id"] == graded["id"] and reviewed[0]["details"]["status"] == "confirmed"
    assert REFERENCE not in json.dumps(reviewed[0])


async def test_an_owner_corrects_a_low_grade(course: Course, db: Conn) -> None:
    item = course.items[0]
    graded = await course.attempt(course.bob, item, LOW)
    corrected = await course.review(course.owner, graded["id"], verdict="incorrect", score=0.1)
    assert (corrected["status"], corrected["verdict"], corrected["score"]) == ("corrected", "incorrect", 0.1)
    assert (corrected["model_verdict"], corrected["model_score"]) == ("correct", 0.75)
    assert await study_reviews(db, course, course.bob) == [
        {"question_id": uuid.UUID(item), "rating": 1, "source": "attempt"}
    ]
    listed = await course.get(f"/questions/{item}/attempts", course.bob)
    assert (listed[0]["status"], listed[0]["score"], listed[0]["reference_answer"]) == (
        "corrected",
        0.1,
        None,
    )
    # A new verdict without a score takes the verdict's: 0.5 for partially correct.
    second = await course.attempt(course.bob, item, LOW)
    partly = await course.review(course.owner, second["id"], verdict="partially_correct")
    assert (partly["status"], partly["score"]) == ("corrected", 0.5)
    assert [r["rating"] for r in await study_reviews(db, course, course.bob)] == [1, 2]  # Again, Hard
    await course.review(course.owner, str(uuid.uuid4()), expect=404, verdict="correct")
    await course.review(course.owner, second["id"], expect=422, verdict="right")
    await course.review(course.owner, second["id"], expect=422, verdict="correct", score=2)


async def test_provisional_attempts_count_against_the_limit(course: Course) -> None:
    patched = await course.http.patch(
        course.url(), json={"max_attempts_per_question": 2}, headers=course.owner
    )
    assert patched.status_code == 200, patched.text
    item = course.items[1]
    first = await course.attempt(course.alice, item, LOW)
    assert first["attempts_left"] == 1 and first["reference_answer"] is None
    last = await course.attempt(course.alice, item, LOW)
    # The limit is used up: the question is done for her, as with any last attempt.
    assert last["attempts_left"] == 0 and last["reference_answer"] == REFERENCE
    await course.attempt(course.alice, item, LOW, expect=409)
    assert len(await course.get("/attempts/provisional", course.owner)) == 2


async def test_only_the_projects_owners_list_and_review(
    course: Course, make_user: UserFactory, db: Conn
) -> None:
    graded = await course.attempt(course.alice, course.items[0], LOW)
    stranger = await make_user("stranger")
    other_owner = await make_user("other-teacher")
    other_project = await create_project(course.http, other_owner, name="another course")
    for who, status in ((course.alice, 403), (course.bob, 403), (course.editor, 403), (stranger, 404)):
        await course.get("/attempts/provisional", who, expect=status)
        await course.review(who, graded["id"], expect=status, verdict="incorrect")
    # The owner of another project: their project has no such attempt, and ours is not theirs.
    response = await course.http.get(f"/projects/{other_project}/attempts/provisional", headers=other_owner)
    assert response.status_code == 200 and response.json() == []
    response = await course.http.post(
        f"/projects/{other_project}/attempts/{graded['id']}/review",
        json={"verdict": "correct"},
        headers=other_owner,
    )
    assert response.status_code == 404
    await course.review(other_owner, graded["id"], expect=404, verdict="correct")
    # The rule is in the SQL: called as a student or an editor, the store finds nothing to list or review.
    async with course.app.state.runtime.pool.connection() as conn:
        for who in (course.alice, course.editor, other_owner):
            scope = {"project_id": uuid.UUID(course.project_id), "user_id": who.id}
            assert await attempts.list_provisional(conn, **scope, page=Page(limit=10, offset=0)) == []
            reviewed = await attempts.review_attempt(
                conn, **scope, attempt_id=uuid.UUID(graded["id"]), verdict="incorrect", score=None,
                default_score=0.0, at=T0,
            )  # fmt: skip
            assert reviewed is None
    row = await (
        await db.execute("SELECT status FROM question_attempts WHERE id = %s", (graded["id"],))
    ).fetchone()
    assert row == {"status": "provisional"}
    # Alice sees her own attempt; Bob sees none of hers.
    assert await course.get(f"/questions/{course.items[0]}/attempts", course.bob) == []


async def test_high_and_medium_grades_are_settled(course: Course, db: Conn) -> None:
    high = await course.attempt(
        course.alice, course.items[0], HIGH, answer=REFERENCE
    )  # the reference's words
    assert (high["status"], high["confidence"]["label"], high["verdict"]) == ("settled", "high", "correct")
    assert high["reference_answer"] == REFERENCE and not high["feedback"].startswith(NOTE_EN)
    medium = await course.attempt(course.bob, course.items[0], MEDIUM)
    assert (medium["status"], medium["confidence"]["label"]) == ("settled", "medium")
    assert [r["rating"] for r in await study_reviews(db, course, course.alice)] == [4]  # Easy at once
    assert len(await study_reviews(db, course, course.bob)) == 1
    assert await course.get("/attempts/provisional", course.owner) == []
    await course.review(course.owner, high["id"], expect=409, verdict="incorrect")
    assert (await ownership(course, course.alice))["studied"] == 1
    # Calibrated high, but in the student's own words: nothing but the grader says it is right.
    capped = await course.attempt(course.alice, course.items[1], HIGH)
    assert (capped["status"], capped["confidence"]["label"], capped["verdict"]) == (
        "settled",
        "medium",
        "correct",
    )
    assert capped["confidence"]["reason"].startswith("high needs the answer to say what the reference says")

"""The study loop through the API on the real embedded Postgres: the FSRS queue over simulated days
(the app's clock moved by the test, compared with fsrs's own Scheduler), settings and exam mode,
graded attempts as reviews, mastery, the class view for owners, and who sees what. Multiple-choice
attempts are graded exactly, so no chat model answers here."""

import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest
from fastapi import FastAPI
from fsrs import Card, Rating, Scheduler
from langchain_core.language_models import FakeMessagesListChatModel

from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.content import chunks
from core.study.exam import exam_plan
from core.study.scheduler import LEARNING_STEPS
from tests.backend.classroom import T0, Classroom
from tests.bank import draft, store, unit_vector
from tests.conftest import Caller, UserFactory, change_runtime, own_app
from tests.stored import uploaded_document

Conn = psycopg.AsyncConnection[dict[str, Any]]
RIGHT, WRONG = "It is moved", "It is copied"


@dataclass
class Course(Classroom):
    ids: dict[str, uuid.UUID] = field(default_factory=dict)

    async def review(self, who: Caller, question_id: str, rating: int, expect: int = 201) -> Any:
        return await self.post("/study/reviews", who, {"question_id": question_id, "rating": rating}, expect)


@pytest.fixture(scope="module")
async def app_http(
    settings: Settings, services: ServiceUrls
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    async with own_app(settings, services) as (app, http):
        change_runtime(app, llm=FakeMessagesListChatModel(responses=[]))  # exact grading needs no model
        yield app, http


@pytest.fixture
async def course(app_http: tuple[FastAPI, httpx.AsyncClient], make_user: UserFactory) -> Course:
    app, http = app_http
    course = await Course.open(app, http, make_user, "study")
    for name in ("owner", "editor", "alice", "bob"):
        course.ids[name] = getattr(course, name).id
    return course


async def add_item(
    course: Course,
    text: str,
    *,
    section: tuple[str, ...] = ("Book", "Ownership"),
    review_state: str = "approved",
    flag: str | None = None,
    type: str = "multiple_choice",
    source_chunk_ids: tuple[int, ...] = (1,),
) -> str:
    item = draft(
        text,
        RIGHT,
        unit_vector(),
        section_path=list(section),
        type=type,
        distractors=[WRONG, "It is cloned", "It is borrowed"] if type == "multiple_choice" else [],
        explanation="Assignment moves a String.",
        source_chunk_ids=list(source_chunk_ids),
    )
    # The teacher's curation (the items routes) is not under test here: its outcome is set directly.
    row = await store(
        course.app, course.project_id, course.ids["owner"], item, review_state=review_state, flag=flag
    )
    return str(row.id)


async def add_chunk(course: Course, text: str) -> int:
    """A passage of the course's material, stored directly (no worker runs in this module)."""
    async with course.app.state.runtime.pool.connection() as conn:
        document = await uploaded_document(
            conn, course.project_id, course.owner.id, "lifetimes.md", text.encode(), title="Lifetimes notes"
        )
        row = chunks.ChunkRow(
            ordinal=0, text=text, context_header="Lifetimes", section_path=("Book", "Lifetimes"),
            page_start=None, page_end=None, char_start=0, char_end=len(text),
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
            embedding=np.full(384, 384**-0.5, np.float32),
        )  # fmt: skip
        async with conn.transaction():
            await chunks.insert_chunks(
                conn, project_id=course.project_id, document_id=document.id, version=1, chunks=[row],
                embedding_model="test", ts_config="english",
            )  # fmt: skip
        found = await conn.execute("SELECT id FROM chunks WHERE document_id = %s", (document.id,))
        return (await found.fetchone())["id"]  # type: ignore[index]


def _as_utc(value: str) -> datetime:
    return datetime.fromisoformat(value).astimezone(UTC)


async def test_queue_follows_fsrs_over_days(course: Course) -> None:
    items = [await add_item(course, f"What happens to String number {i}?") for i in range(3)]
    await add_item(course, "A pending item?", review_state="pending")
    await add_item(course, "A flagged item?", flag="source_changed")
    await add_item(course, "A rejected item?", review_state="rejected")

    queue = await course.get("/study/queue", course.alice)
    assert [i["question"]["id"] for i in queue["items"]] == items  # new items, bank order; others not served
    assert all(i["is_new"] and i["card"]["state"] == "new" for i in queue["items"])
    assert (queue["due_count"], queue["new_count"], queue["new_budget_left"], queue["exam"]) == (
        0,
        3,
        20,
        None,
    )
    first = queue["items"][0]["question"]
    assert first["answer"] is None and first["explanation"] is None  # a question's answer stays hidden

    # Alice studies items[0] over days; fsrs's own scheduler (with the product's learning step) gets the
    # same ratings at the same times.
    fsrs_scheduler = Scheduler(learning_steps=LEARNING_STEPS, enable_fuzzing=False)
    card = Card(card_id=0, due=T0)
    for rating in (3, 3, 3, 1, 3, 3):
        card, _ = fsrs_scheduler.review_card(card, Rating(rating), review_datetime=course.clock.now)
        out = await course.review(course.alice, items[0], rating)
        assert _as_utc(out["next_due"]) == card.due
        assert out["card"]["stability"] == pytest.approx(card.stability)
        assert out["card"]["difficulty"] == pytest.approx(card.difficulty)
        assert out["card"]["state"] == card.state.name.lower()
        # Before it is due it is not in the queue's due part; once due, it leads.
        course.clock.now = card.due - timedelta(seconds=1)
        assert items[0] not in [
            i["question"]["id"] for i in (await course.get("/study/queue", course.alice))["items"]
        ]
        course.clock.now = card.due
        queue = await course.get("/study/queue", course.alice)
        assert queue["items"][0]["question"]["id"] == items[0] and not queue["items"][0]["is_new"]
        assert queue["due_count"] == 1
    assert out["card"]["reps"] == 6 and out["card"]["lapses"] == 1

    # Bob sees none of Alice's cards: everything is new to him.
    bob = await course.get("/study/queue", course.bob)
    assert {i["question"]["id"] for i in bob["items"]} == set(items)
    assert all(i["is_new"] for i in bob["items"])
    # An item one may not study is a 404, as is a question of another project.
    pending = await add_item(course, "Another pending item?", review_state="pending")
    await course.review(course.alice, pending, 3, expect=404)
    await course.review(course.alice, str(uuid.uuid4()), 3, expect=404)
    await course.review(course.alice, items[1], 5, expect=422)


async def test_most_overdue_first_and_new_budget(course: Course) -> None:
    items = [await add_item(course, f"Budget question {i}?") for i in range(4)]
    for item in items[:2]:  # two Easy items go straight to review, due in days
        await course.review(course.alice, item, 4)
        course.clock.now += timedelta(days=1)
    settings = await course.http.put(
        course.url("/study/settings"), json={"new_per_day": 1}, headers=course.alice
    )
    assert settings.status_code == 200, settings.text
    assert settings.json()["new_per_day"] == 1
    course.clock.now = T0 + timedelta(days=60)  # both overdue; items[0] the more
    queue = await course.get("/study/queue", course.alice)
    ids = [i["question"]["id"] for i in queue["items"]]
    assert ids == [items[0], items[1], items[2]]  # due, most overdue first, then one new item
    assert (queue["due_count"], queue["new_count"], queue["new_budget_left"]) == (2, 2, 1)
    await course.review(course.alice, items[2], 3)  # the day's one new item
    queue = await course.get("/study/queue", course.alice)
    assert queue["new_budget_left"] == 0 and items[3] not in [i["question"]["id"] for i in queue["items"]]
    course.clock.now += timedelta(days=1)  # a new day, a new budget
    assert (await course.get("/study/queue", course.alice))["new_budget_left"] == 1
    bad = await course.http.put(
        course.url("/study/settings"), json={"desired_retention": 2}, headers=course.alice
    )
    assert bad.status_code == 422


async def test_exam_dates_and_predicted_retention(course: Course) -> None:
    items = [await add_item(course, f"Exam question {i}?") for i in range(2)]
    editor = await course.http.patch(course.url(), json={"exam_date": "2026-04-01"}, headers=course.editor)
    assert editor.status_code == 403
    owner = await course.http.patch(course.url(), json={"exam_date": "2026-04-01"}, headers=course.owner)
    assert owner.status_code == 200 and owner.json()["exam_date"] == "2026-04-01"
    await course.review(course.alice, items[0], 4)
    await course.review(course.alice, items[1], 1)  # learning, due in a minute, weak at the exam
    course.clock.now += timedelta(days=30)
    queue = await course.get("/study/queue", course.alice)
    exam_at = datetime(2026, 4, 1, tzinfo=UTC)
    scheduler = Scheduler(enable_fuzzing=False)
    cards = [
        scheduler.review_card(Card(card_id=0, due=T0), r, review_datetime=T0)[0]
        for r in (Rating.Easy, Rating.Again)
    ]
    expected = sum(scheduler.get_card_retrievability(c, exam_at) for c in cards) / 2
    assert queue["exam"] == {
        "date": "2026-04-01",
        "source": "project",
        "predicted_retention": pytest.approx(expected),
    }
    # Both due; the lower retrievability at the exam (the failed item) comes first.
    assert [i["question"]["id"] for i in queue["items"]] == [items[1], items[0]]

    own = await course.http.put(
        course.url("/study/settings"), json={"exam_date": "2026-05-01"}, headers=course.alice
    )
    assert own.json() == {
        "exam_date": "2026-05-01",
        "project_exam_date": "2026-04-01",
        "new_per_day": 20,
        "desired_retention": 0.9,
    }
    assert (await course.get("/study/queue", course.alice))["exam"]["source"] == "student"
    cleared = await course.http.put(
        course.url("/study/settings"), json={"exam_date": None}, headers=course.alice
    )
    assert cleared.json()["exam_date"] is None
    assert (await course.get("/study/queue", course.alice))["exam"]["source"] == "project"
    assert (await course.get("/study/settings", course.bob))["exam_date"] is None  # Alice's are hers
    course.clock.now = datetime(2026, 4, 2, tzinfo=UTC)  # the exam has passed
    assert (await course.get("/study/queue", course.alice))["exam"] is None


async def test_exam_mode_schedules_for_the_exam(course: Course) -> None:
    """With an exam ahead, a card is next due at exam mode's plan (core/study/exam.py, computed here
    from fsrs's own Scheduler), not at fsrs's plain due date; after the exam it is plain fsrs again."""
    item = await add_item(course, "Planned for the exam?")
    exam = await course.http.patch(course.url(), json={"exam_date": "2026-04-11"}, headers=course.owner)
    assert exam.status_code == 200
    exam_at = datetime(2026, 4, 11, tzinfo=UTC)
    scheduler, card = Scheduler(enable_fuzzing=False), Card(card_id=0, due=T0)
    for rating in (3, 3):  # through the learning steps to the review state
        card, _ = scheduler.review_card(card, Rating(rating), review_datetime=course.clock.now)
        out = await course.review(course.alice, item, rating)
        course.clock.now = card.due
    settings = course.app.state.runtime.settings
    planned = exam_plan(  # the student's only card: the capped plan is the card's own
        scheduler,
        {item: card},
        exam_at=exam_at,
        now=card.last_review,
        term_retention=settings.study.exam_term_retention,
        daily_max=settings.study.exam_daily_review_max or None,
    )[item]
    assert _as_utc(out["next_due"]) == _as_utc(out["card"]["due"]) == planned
    assert card.due < planned < exam_at  # later than plain fsrs, before the exam
    course.clock.now = card.due  # fsrs alone would serve it now; exam mode does not yet
    queue = await course.get("/study/queue", course.alice)
    assert queue["due_count"] == 0 and item not in [i["question"]["id"] for i in queue["items"]]
    course.clock.now = planned
    queue = await course.get("/study/queue", course.alice)
    assert queue["due_count"] == 1 and queue["items"][0]["question"]["id"] == item
    assert _as_utc(queue["items"][0]["card"]["due"]) == planned
    reviewed, _ = scheduler.review_card(card, Rating.Good, review_datetime=planned)
    assert scheduler.get_card_retrievability(reviewed, exam_at) >= 0.9  # its review there reaches the target
    # Without the exam date it is plain fsrs: due since fsrs's own date.
    await course.http.patch(course.url(), json={"exam_date": None}, headers=course.owner)
    course.clock.now = card.due
    queue = await course.get("/study/queue", course.alice)
    assert queue["due_count"] == 1 and _as_utc(queue["items"][0]["card"]["due"]) == card.due


async def _attempt(course: Course, who: Caller, question_id: str, answer: str) -> None:
    response = await course.http.post(
        course.url(f"/questions/{question_id}/attempts"), json={"answer": answer}, headers=who
    )
    assert response.status_code == 201, response.text
    course.clock.now += timedelta(minutes=1)  # the reviews it makes are in order


async def test_attempts_review_and_move_mastery(course: Course, db: Conn) -> None:
    strong = [
        await add_item(course, f"Strong topic {i}?", section=("Book", "Borrowing", "Refs")) for i in range(2)
    ]
    weak = [await add_item(course, f"Weak topic {i}?", section=("Book", "Lifetimes")) for i in range(2)]
    await _attempt(course, course.alice, strong[0], RIGHT)  # first try, exact: Easy
    rows = await (
        await db.execute(
            "SELECT rating, source FROM study_reviews WHERE project_id = %s AND user_id = %s",
            (course.project_id, course.ids["alice"]),
        )
    ).fetchall()
    assert rows == [{"rating": 4, "source": "attempt"}]
    await _attempt(course, course.alice, weak[0], WRONG)
    await _attempt(course, course.alice, weak[0], WRONG)

    mastery = (await course.get("/mastery", course.alice))["topics"]
    assert [t["topic"] for t in mastery] == [["Book", "Lifetimes"], ["Book", "Borrowing"]]  # weakest first
    lifetimes, borrowing = mastery
    assert (borrowing["items"], borrowing["studied"], borrowing["attempts"]) == (2, 1, 1)
    assert (lifetimes["items"], lifetimes["studied"], lifetimes["attempts"]) == (2, 1, 2)
    assert borrowing["next_items"][0]["question_id"] == strong[1]  # the unstudied one first
    await _attempt(course, course.alice, weak[0], RIGHT)  # correct, but not at the first try: Good
    ratings = await (
        await db.execute(
            "SELECT rating FROM study_reviews WHERE question_id = %s AND user_id = %s ORDER BY reviewed_at",
            (weak[0], course.ids["alice"]),
        )
    ).fetchall()
    assert [r["rating"] for r in ratings] == [1, 1, 3]
    lifted = next(
        t
        for t in (await course.get("/mastery", course.alice))["topics"]
        if t["topic"] == ["Book", "Lifetimes"]
    )
    assert lifted["mastery"] > lifetimes["mastery"]
    before = borrowing["mastery"]
    await _attempt(course, course.alice, strong[1], RIGHT)
    after = next(
        t
        for t in (await course.get("/mastery", course.alice))["topics"]
        if t["topic"] == ["Book", "Borrowing"]
    )
    assert after["mastery"] > before
    # Time passes: memory fades, and so does mastery.
    course.clock.now += timedelta(days=200)
    faded = next(
        t
        for t in (await course.get("/mastery", course.alice))["topics"]
        if t["topic"] == ["Book", "Borrowing"]
    )
    assert faded["mastery"] < after["mastery"]
    # Bob has done nothing.
    assert all(
        t["mastery"] == 0 and t["studied"] == 0 for t in (await course.get("/mastery", course.bob))["topics"]
    )


async def test_what_to_study_next_comes_from_the_askers_own_mastery(course: Course) -> None:
    passage = await add_chunk(course, "A lifetime names the scope for which a reference is valid.")
    strong = [await add_item(course, f"Borrowing {i}?", section=("Book", "Borrowing")) for i in range(2)]
    question = "What does a lifetime annotation name?"
    weak = await add_item(course, question, section=("Book", "Lifetimes"), source_chunk_ids=(passage,))
    for item in strong:
        await _attempt(course, course.alice, item, RIGHT)
    await _attempt(course, course.alice, weak, WRONG)

    ask = {"question": "What should I study next?"}
    response = await course.http.post(course.url("/qa"), json=ask, headers=course.alice)
    assert response.status_code == 200, response.text  # the app's chat model has no reply: none was asked
    reply = response.json()
    assert reply["outcome"] == "study_plan" and reply["has_answer"]
    answer = reply["answer"]
    assert answer.index("Book › Lifetimes") < answer.index("Book › Borrowing")  # weakest first
    assert f"“{question}”" in answer
    assert [c["chunk_id"] for c in reply["citations"]] == [passage]

    # Streamed: the same reply as events. Bob's record is his own: nothing studied, every topic at 0 %.
    stream = await course.http.post(course.url("/qa"), json={**ask, "stream": True}, headers=course.bob)
    events = [line.removeprefix("data: ") for line in stream.text.splitlines() if line.startswith("data: ")]
    done = json.loads(events[-1])
    assert json.loads(events[0])["text"] == done["answer"] and done["outcome"] == "study_plan"
    assert "mastery 0%" in done["answer"] and "0 of 1 items studied" in done["answer"]

    portuguese = {"question": "O que devo estudar agora?"}
    response = await course.http.post(course.url("/qa"), json=portuguese, headers=course.alice)
    assert response.json()["answer"].startswith("Pelo seu próprio histórico de estudo")


async def test_class_view_for_owners_only(course: Course) -> None:
    hard = await add_item(course, "Which option is right?", section=("Book", "Moves"))
    await add_item(course, "Never studied?", section=("Book", "Traits"))
    await _attempt(course, course.alice, hard, WRONG)
    await _attempt(course, course.bob, hard, WRONG)
    await _attempt(course, course.bob, hard, RIGHT)
    for who in (course.alice, course.bob, course.editor):
        await course.get("/mastery/class", who, expect=403)
    response = await course.http.get(course.url("/mastery/class"), headers=course.owner)
    assert response.status_code == 200
    body = response.json()
    assert body["students"] == 2
    moves = next(t for t in body["topics"] if t["topic"] == ["Book", "Moves"])
    assert moves["students_studied"] == 2 and sum(moves["histogram"]) == 2
    assert 0 < moves["mean_mastery"] < 1
    assert moves["most_failed"] == [
        {"question_id": hard, "question": "Which option is right?", "failures": 2, "attempts": 3}
    ]
    traits = next(t for t in body["topics"] if t["topic"] == ["Book", "Traits"])
    assert traits["students_studied"] == 0 and traits["histogram"] == [0] * 5
    text = response.text
    for secret in (
        WRONG,
        RIGHT,
        course.alice.email,
        course.bob.email,
        str(course.ids["alice"]),
        str(course.ids["bob"]),
    ):
        assert secret not in text


async def test_non_members_get_404(course: Course, make_user: UserFactory) -> None:
    item = await add_item(course, "Members only?")
    stranger = await make_user("stranger")
    for path in ("/study/queue", "/study/settings", "/mastery", "/mastery/class"):
        await course.get(path, stranger, expect=404)
    await course.review(stranger, item, 3, expect=404)
    put = await course.http.put(course.url("/study/settings"), json={"new_per_day": 5}, headers=stranger)
    assert put.status_code == 404


async def test_forget_member_removes_study_rows(course: Course, db: Conn) -> None:
    item = await add_item(course, "Forget me?")
    await course.review(course.alice, item, 3)
    await course.review(course.bob, item, 3)
    put = await course.http.put(course.url("/study/settings"), json={"new_per_day": 5}, headers=course.alice)
    assert put.status_code == 200
    removed = await course.http.delete(course.url(f"/members/{course.ids['alice']}"), headers=course.owner)
    assert removed.status_code == 204, removed.text
    for table in ("study_cards", "study_reviews", "study_settings"):
        counts = await (
            await db.execute(
                "SELECT count(*) FILTER (WHERE user_id = %s) AS alice,"
                f" count(*) FILTER (WHERE user_id = %s) AS bob FROM {table} WHERE project_id = %s",
                (course.ids["alice"], course.ids["bob"], course.project_id),
            )
        ).fetchone()
        assert counts is not None and counts["alice"] == 0, table
        assert counts["bob"] == (0 if table == "study_settings" else 1), table

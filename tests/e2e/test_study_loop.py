"""The study loop in Chromium, on a bank of three generated flashcards: the teacher edits one in the
review queue (PATCH), rejects one and approves the others; a student flips and rates flashcards in the
due queue, which moves on, and the reviews are stored (checked over the API); the owner sets the
course's exam date, a student sets their own and sees the predicted recall on exam day; the owner sees
the class's mastery per topic. The tests run in file order on one module's course (one stack for the
session). Every screen passes axe-core with no serious or critical violation, and is photographed."""

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from tests.conftest import Caller, UserFactory
from tests.e2e.conftest import Course, OpenPage, WebStack, check, invite_and_accept

EDITED = "Who owns a value in Rust, and for how long?"


@dataclass
class Bank:
    course: Course
    student: Caller
    items: list[dict[str, Any]]  # the generated flashcards, as the owner saw them

    def api(self, base: str, caller: Caller) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=f"{base}/projects/{self.course.project_id}", headers=caller, timeout=60
        )


@pytest.fixture(scope="module")
async def bank(web_stack: WebStack, course: Course, make_user: UserFactory) -> AsyncIterator[Bank]:
    """Three generated flashcards (pending) and a student (a viewer) in the course, over the API."""
    student = await make_user("student")
    async with httpx.AsyncClient(base_url=web_stack.base, headers=course.owner, timeout=120) as http:
        base = f"/projects/{course.project_id}"
        items = []
        for _ in range(3):  # one at a time: the short course makes one group of sources per request
            generated = await http.post(f"{base}/questions/generate", json={"n": 1, "types": ["flashcard"]})
            assert generated.status_code == 201, generated.text
            items += generated.json()["questions"]
        assert [i["type"] for i in items] == ["flashcard"] * 3, items
        assert {i["review_state"] for i in items} == {"pending"}
        assert len({i["question"] for i in items}) == 3
        await invite_and_accept(http, course.owner, course.project_id, student, "viewer")
    yield Bank(course, student, items)


async def test_teacher_edits_rejects_and_approves_in_the_review_queue(
    web_stack: WebStack, open_page: OpenPage, bank: Bank, shots: Path
) -> None:
    edited, rejected, approved = bank.items
    page, problems = await open_page(bank.course.owner, f"/p/{bank.course.project_id}/teacher")
    queue = page.locator(".review-item")
    await expect(queue).to_have_count(3)

    item = page.locator(f".review-item[data-question='{edited['id']}']")
    await item.get_by_role("button", name="Edit").click()
    await item.get_by_label("Front").fill(EDITED)
    await check(page, shots, "13-teacher-edit")
    await item.get_by_role("button", name="Save").click()
    await expect(item).to_contain_text(EDITED)
    await queue.filter(has_text=rejected["question"]).get_by_role("button", name="Reject").click()
    await expect(queue).to_have_count(2)

    async with bank.api(web_stack.base, bank.course.owner) as api:
        row = (await api.get(f"/questions/{edited['id']}")).json()
        assert row["question"] == EDITED and row["answer"] == edited["answer"]
        assert row["review_state"] == "pending"  # an edit is not an approval
        assert (await api.get(f"/questions/{rejected['id']}")).json()["review_state"] == "rejected"

    for text in (EDITED, approved["question"]):
        await queue.filter(has_text=text).get_by_role("button", name="Approve").click()
    await expect(queue).to_have_count(0)
    await expect(page.get_by_text("Nothing to review.")).to_be_visible()
    async with bank.api(web_stack.base, bank.course.owner) as api:
        listed = (await api.get("/questions", params={"review_state": "approved"})).json()
        assert {q["id"] for q in listed} == {edited["id"], approved["id"]}
    assert problems.errors == []


async def test_student_flips_and_rates_flashcards(
    web_stack: WebStack, open_page: OpenPage, bank: Bank, shots: Path
) -> None:
    page, problems = await open_page(bank.student, f"/p/{bank.course.project_id}/study")
    await expect(page.get_by_role("button", name="Today")).to_have_attribute("aria-pressed", "true")
    await expect(page.get_by_text("0 due, 2 new")).to_be_visible()

    card = page.locator("article.flashcard")
    first_id = await card.get_attribute("data-question")
    await expect(card.locator(".back")).to_have_count(0)
    await expect(card.get_by_role("button", name="Good")).to_have_count(0)
    await card.get_by_role("button", name="Show answer").click()
    await expect(card.locator(".back")).to_have_text("The value is dropped: its memory is freed.")
    await expect(card.locator(".back")).to_be_focused()
    await check(page, shots, "14-flashcard")
    await card.get_by_role("button", name="Good").click()

    # The queue moves on to the other card, whose front takes the focus.
    await expect(card).not_to_have_attribute("data-question", first_id or "")
    await expect(card.locator(".front")).to_be_focused()
    second_id = await card.get_attribute("data-question")
    async with bank.api(web_stack.base, bank.student) as api:
        queue = (await api.get("/study/queue")).json()
        assert [i["question"]["id"] for i in queue["items"] if i["is_new"]] == [second_id]
        assert queue["new_count"] == 1
        topics = (await api.get("/mastery")).json()["topics"]
        assert sum(t["studied"] for t in topics) == 1

    await card.get_by_role("button", name="Show answer").click()
    await card.get_by_role("button", name="Again").click()
    await expect(page.get_by_text("Nothing due right now. Well done!")).to_be_visible()
    async with bank.api(web_stack.base, bank.student) as api:
        queue = (await api.get("/study/queue")).json()
        assert queue["new_count"] == 0
        cards = {i["question"]["id"]: i["card"] for i in queue["items"]}
        assert all(c["reps"] >= 1 and c["state"] != "new" for c in cards.values())
        topics = (await api.get("/mastery")).json()["topics"]
        assert sum(t["studied"] for t in topics) == 2
    assert problems.errors == []


async def test_exam_dates_predicted_recall_and_class_mastery(
    web_stack: WebStack, open_page: OpenPage, bank: Bank, shots: Path
) -> None:
    course_exam = (date.today() + timedelta(days=30)).isoformat()
    own_exam = (date.today() + timedelta(days=10)).isoformat()
    # The owner: the course's exam date in the project's settings, then the class's mastery.
    page, problems = await open_page(bank.course.owner, f"/p/{bank.course.project_id}/members")
    await page.get_by_label("Exam date (whole class)").fill(course_exam)
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    async with httpx.AsyncClient(base_url=web_stack.base, headers=bank.course.owner) as api:
        project = (await api.get(f"/projects/{bank.course.project_id}")).json()
        assert project["exam_date"] == course_exam

    await page.get_by_role("link", name="Teacher").click()
    mastery = page.locator("section[aria-labelledby=class-title]")
    await expect(mastery).to_contain_text("Students: 1")
    chart = mastery.locator("figure.chart")
    await expect(chart).to_contain_text("Ownership › The rules")
    await expect(chart).to_contain_text("studied by 1 · students per band 0–20 … 80–100%:")
    await check(page, shots, "15-class-mastery")
    assert problems.errors == []

    # The student: the course's date, then their own, each with the predicted recall on exam day.
    page, problems = await open_page(bank.student, f"/p/{bank.course.project_id}/study")
    forecast = page.locator(".exam-forecast")
    recall = re.compile(r"Predicted recall on exam day: \d+%")
    await expect(forecast).to_contain_text(f"Exam on {course_exam} (the course’s date)")
    await expect(forecast).to_contain_text(recall)
    await expect(page.get_by_text(f"The course’s exam: {course_exam}")).to_be_visible()
    await page.get_by_label("My exam date").fill(own_exam)
    await page.get_by_role("button", name="Save").click()
    await expect(forecast).to_contain_text(f"Exam on {own_exam} (your date)")
    await expect(forecast).to_contain_text(recall)
    await check(page, shots, "16-exam-date")
    async with bank.api(web_stack.base, bank.student) as api:
        settings = (await api.get("/study/settings")).json()
        assert settings["exam_date"] == own_exam and settings["project_exam_date"] == course_exam
        exam = (await api.get("/study/queue")).json()["exam"]
        assert exam["date"] == own_exam and exam["source"] == "student"
        assert 0 < exam["predicted_retention"] <= 1  # two studied items, remembered in part on the day
    assert problems.errors == []

"""Provisional grades in Chromium (issue 28, grading): with a calibration that labels every model grade
low, a student's graded answer says "Provisional — your teacher will check"; the teacher confirms it in
the Teacher tab's "Review grades" and the student's attempts then say it was checked. The same in
Portuguese (the project's language switched to pt): "Provisória — o seu professor vai conferir", and the
teacher corrects the grade. Statuses are checked over the API; every screen passes axe-core with no
serious or critical violation, and is photographed (17-20)."""

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect

from core.confidence import Calibration
from core.confidence.source import PinnedCalibration
from tests.conftest import Caller, UserFactory, change_runtime
from tests.e2e.conftest import Course, OpenPage, WebStack, check, invite_and_accept
from tests.label_models import one_signal

# p = 0.5 for every grade, below low_below: every model grade is labelled low.
ALWAYS_LOW = Calibration(
    "e2e-chat",
    "e2e-embedding",
    {"grade": one_signal("score", mean=0.5, scale=1.0, weight=0.0, high_min=0.9, low_below=0.6)},
)
ANSWER = "It is dropped when its owner goes out of scope."


@dataclass
class Class:
    course: Course
    student: Caller
    question: dict[str, Any]

    def api(self, base: str, caller: Caller) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=f"{base}/projects/{self.course.project_id}", headers=caller, timeout=60
        )


@pytest.fixture(scope="module")
def low_grades(web_stack: WebStack) -> Iterator[None]:
    """The served app grades with ALWAYS_LOW for this module, then with its own calibration again."""
    before = web_stack.app.state.runtime.calibrations
    change_runtime(web_stack.app, calibrations=PinnedCalibration(ALWAYS_LOW))
    yield
    change_runtime(web_stack.app, calibrations=before)


@pytest.fixture(scope="module")
async def klass(
    web_stack: WebStack, course: Course, make_user: UserFactory, low_grades: None
) -> AsyncIterator[Class]:
    """One approved short-answer question and a student (a viewer), over the API."""
    student = await make_user("student")
    async with httpx.AsyncClient(base_url=web_stack.base, headers=course.owner, timeout=120) as http:
        base = f"/projects/{course.project_id}"
        generated = await http.post(f"{base}/questions/generate", json={"n": 1, "types": ["short_answer"]})
        assert generated.status_code == 201, generated.text
        [question] = generated.json()["questions"]
        approved = await http.post(f"{base}/questions/{question['id']}/review", json={"action": "approve"})
        assert approved.status_code == 200, approved.text
        await invite_and_accept(http, course.owner, course.project_id, student, "viewer")
    yield Class(course, student, question)


async def answer_in_the_quiz(page: Page, answer_label: str, submit: str) -> None:
    await page.locator(".segmented button").nth(1).click()  # the quiz (Today is first)
    card = page.locator("article.quiz")
    await card.get_by_label(answer_label).fill(ANSWER)
    await card.get_by_role("button", name=submit).click()


async def statuses(web_stack: WebStack, klass: Class) -> list[str]:
    async with klass.api(web_stack.base, klass.student) as api:
        listed = (await api.get(f"/questions/{klass.question['id']}/attempts")).json()
    return [a["status"] for a in listed]  # newest first


async def test_student_sees_provisional_and_the_teacher_confirms(
    web_stack: WebStack, open_page: OpenPage, klass: Class, shots: Path
) -> None:
    project = klass.course.project_id
    page, problems = await open_page(klass.student, f"/p/{project}/study")
    await answer_in_the_quiz(page, "Your answer", "Submit answer")
    grade = page.locator("article.quiz .grade")
    await expect(grade.locator(".grade-status")).to_have_text(
        "Provisional — your teacher will check", timeout=60_000
    )
    await expect(grade).not_to_contain_text("Reference answer")
    await check(page, shots, "20-provisional-grade")
    assert await statuses(web_stack, klass) == ["provisional"]

    teacher, teacher_problems = await open_page(klass.course.owner, f"/p/{project}/teacher")
    queue = teacher.locator("section[aria-labelledby=grades-title]")
    await expect(queue.get_by_role("heading", name="Review grades")).to_be_visible()
    item = queue.locator(".grade-item")
    await expect(item).to_have_count(1)
    await expect(item).to_contain_text(klass.student.email)
    await expect(item).to_contain_text(ANSWER)
    await expect(item).to_contain_text("confidence low 50%")
    await check(teacher, shots, "21-review-grades")
    await item.get_by_role("button", name="Confirm").click()
    await expect(item).to_have_count(0)
    await expect(queue.get_by_text("No grades waiting for review.")).to_be_visible()
    assert await statuses(web_stack, klass) == ["confirmed"]

    attempts = page.locator("article.quiz details.attempts")
    await attempts.locator("summary").click()
    await expect(attempts.locator(".grade-status")).to_have_text("Checked by your teacher")
    assert problems.errors == [] and teacher_problems.errors == []


async def test_in_portuguese_the_teacher_corrects_it(
    web_stack: WebStack, open_page: OpenPage, klass: Class, shots: Path
) -> None:
    project = klass.course.project_id
    async with httpx.AsyncClient(base_url=web_stack.base, headers=klass.course.owner) as http:
        assert (await http.patch(f"/projects/{project}", json={"language": "pt"})).status_code == 200
    try:
        page, problems = await open_page(klass.student, f"/p/{project}/study")
        await answer_in_the_quiz(page, "Sua resposta", "Enviar resposta")
        grade = page.locator("article.quiz .grade")
        status = grade.locator(".grade-status")
        await expect(status).to_have_text("Provisória — o seu professor vai conferir", timeout=60_000)
        await expect(grade).to_contain_text(
            "Provisória — o seu professor vai conferir esta nota."
        )  # the feedback
        await check(page, shots, "22-provisional-grade-pt")

        teacher, teacher_problems = await open_page(klass.course.owner, f"/p/{project}/teacher")
        item = teacher.locator(".grade-item")
        await expect(teacher.get_by_role("heading", name="Revisar notas")).to_be_visible()
        await expect(item).to_have_count(1)
        await item.get_by_label("Veredito").select_option("partially_correct")
        await item.get_by_label("Nota (%)").fill("40")
        await check(teacher, shots, "23-review-grades-pt")
        await item.get_by_role("button", name="Salvar").click()
        await expect(item).to_have_count(0)
        async with klass.api(web_stack.base, klass.student) as api:
            listed = (await api.get(f"/questions/{klass.question['id']}/attempts")).json()
        newest = listed[0]
        assert (newest["status"], newest["verdict"], newest["score"]) == (
            "corrected",
            "partially_correct",
            0.4,
        )

        attempts = page.locator("article.quiz details.attempts")
        await attempts.locator("summary").click()
        await expect(attempts.locator(".grade-status").first).to_have_text("Corrigida pelo seu professor")
        assert problems.errors == [] and teacher_problems.errors == []
    finally:
        async with httpx.AsyncClient(base_url=web_stack.base, headers=klass.course.owner) as http:
            await http.patch(f"/projects/{project}", json={"language": "en"})

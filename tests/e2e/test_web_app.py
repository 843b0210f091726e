"""The web app end to end in Chromium: sign in, create a project, drop a Markdown file and watch it reach
ready, ask a question and see the answer stream in with a citation that opens its passage, generate and
answer a quiz question, and a viewer who is offered no upload. Every main screen passes axe-core with no
serious or critical violation, and is photographed."""

import re
from pathlib import Path

from playwright.async_api import Browser, expect

from tests.conftest import UserFactory
from tests.e2e.conftest import (
    COURSE,
    QUESTION,
    Course,
    OpenPage,
    PageProblems,
    WebStack,
    check,
    new_context,
    sign_in,
)


async def test_sign_in_create_project_and_upload(
    web_stack: WebStack, browser: Browser, make_user: UserFactory, shots: Path
) -> None:
    user = await make_user("student")
    context = await new_context(browser)
    page = await context.new_page()
    problems = PageProblems(page)
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible()
    await check(page, shots, "01-sign-in")
    await page.get_by_label("API key").fill("sk-studyai-not-a-key")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_contain_text("not accepted")
    await sign_in(page, web_stack.base, user)
    # The key lives in this tab's sessionStorage only.
    assert await page.evaluate("() => localStorage.length") == 0
    assert await page.evaluate("() => sessionStorage.getItem('studyai.key')") is not None

    await page.get_by_label("Name").fill("Systems programming")
    await page.get_by_label("Language").select_option("en")
    await page.get_by_role("button", name="Create").click()
    await expect(page.get_by_role("heading", name="Systems programming")).to_be_visible()
    await expect(page.get_by_text("Drop PDF or Markdown files here")).to_be_visible()

    # A real drop event carrying the file, as a drag from the desktop delivers it.
    transfer = await page.evaluate_handle(
        """(text) => { const t = new DataTransfer();
           t.items.add(new File([text], 'ownership.md', {type: 'text/markdown'})); return t; }""",
        COURSE,
    )
    await page.dispatch_event("[data-testid=dropzone]", "drop", {"dataTransfer": transfer})
    upload = page.locator("li.upload")
    await expect(upload).to_contain_text("ownership.md")
    row = page.locator("tr[data-document=ownership]")
    await expect(row.locator(".badge")).to_have_text("Ready", timeout=120_000)
    await expect(upload.locator(".badge")).to_have_text("Ready")
    await check(page, shots, "03-documents")

    await row.get_by_role("link", name="Chunks").click()
    await expect(page.locator(".chunk").first).to_contain_text("Each value in Rust has an owner")
    await expect(page.locator(".chunk").first).to_contain_text("Ownership › The rules")
    await check(page, shots, "04-chunks")

    await page.get_by_role("link", name="Projects").first.click()
    await expect(page.get_by_role("link", name="Systems programming")).to_be_visible()
    await check(page, shots, "02-projects")
    assert problems.expected("status of 401") == []  # the wrong key, refused
    await context.close()


async def test_ask_streams_and_cites(
    web_stack: WebStack, open_page: OpenPage, course: Course, shots: Path
) -> None:
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/ask")
    await page.get_by_label("Your question").fill(QUESTION)
    await page.get_by_role("button", name="Ask", exact=True).click()
    # The answer is shown while it is written: partial text in the streaming element, then the whole.
    streaming = page.locator("[data-streaming=true]")
    await expect(streaming).to_contain_text("Each value", timeout=30_000)
    partial = await streaming.text_content()
    answer = page.locator(".msg.assistant .answer.markdown")
    await expect(answer).to_contain_text("the value is dropped", timeout=30_000)
    assert partial is not None and len(partial) < len(await answer.text_content() or "")
    await expect(page.locator(".msg.assistant strong")).to_have_text("owner")  # Markdown, sanitised

    chip = page.locator(".msg.assistant .chip").first
    await expect(chip).to_contain_text("ownership")
    await chip.click()
    passage = page.get_by_role("complementary")
    await expect(passage.get_by_role("heading", name="ownership")).to_be_focused()
    await expect(passage).to_contain_text("Ownership › ")
    await expect(passage.locator(".passage-text")).to_contain_text("owner")
    await check(page, shots, "05-ask")
    await page.keyboard.press("Escape")
    await expect(passage).to_have_count(0)

    # The conversation is kept: listed, and reopened from the list with its citations.
    thread = page.locator(".threads li a").first
    await expect(thread).to_have_text(QUESTION)
    await page.goto(f"{web_stack.base}/app/#/p/{course.project_id}/ask")
    await page.locator(".threads li a").first.click()
    await expect(page.locator(".msg.user")).to_contain_text(QUESTION)
    await expect(page.locator(".msg.assistant .chip")).to_have_count(1)

    # On a phone-width screen the same answer and its passage.
    small, _ = await open_page(course.owner, phone=True)
    await small.goto(page.url)
    await small.locator(".msg.assistant .chip").first.click()
    await expect(small.get_by_role("complementary")).to_be_visible()
    await check(small, shots, "06-ask-phone")
    assert problems.errors == []


async def test_quiz_generate_and_answer(open_page: OpenPage, course: Course, shots: Path) -> None:
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/study")
    await page.get_by_role("button", name="Quiz").click()
    await page.get_by_text("Generate questions").click()
    await page.get_by_label("How many").fill("1")
    for kind in ("Multiple choice", "Application", "Flashcard"):
        await page.get_by_label(kind).uncheck()
    await page.get_by_role("button", name="Generate", exact=True).click()
    await expect(page.get_by_role("status").filter(has_text="new")).to_contain_text("1 new", timeout=60_000)
    # A generated item waits for the teacher's approval before anyone studies it.
    await expect(page.get_by_text("No questions yet.")).to_be_visible()
    await page.get_by_role("link", name="Teacher").click()
    review = page.locator(".review-item")
    await expect(review).to_have_count(1)
    await check(page, shots, "09-teacher")
    await review.get_by_role("button", name="Approve").click()
    await expect(review).to_have_count(0)
    await page.get_by_role("link", name="Study", exact=True).click()
    await page.get_by_role("button", name="Quiz").click()
    card = page.locator("article.quiz")
    await expect(card).to_be_visible()
    await card.get_by_label("Your answer").fill("It is dropped when its owner goes out of scope.")
    await card.get_by_role("button", name="Submit answer").click()
    grade = card.locator(".grade")
    await expect(grade).to_contain_text("Score", timeout=60_000)
    verdicts = re.compile("^(Correct|Partly correct|Not correct)$")
    await expect(grade.locator("strong").first).to_have_text(verdicts)
    await expect(grade.locator("p").nth(1)).not_to_be_empty()  # the evaluator's feedback
    await expect(grade.locator(".chip").first).to_contain_text("ownership")
    await check(page, shots, "08-study-quiz")
    # The study loop: the due queue (with the exam date) and mastery per topic after that attempt.
    await page.get_by_role("button", name="Today").click()
    await expect(page.get_by_label("My exam date")).to_be_visible()
    await expect(page.get_by_text(re.compile(r"\d+ due, \d+ new"))).to_be_visible()
    await check(page, shots, "11-study-today")
    await page.get_by_role("button", name="Mastery").click()
    await expect(page.locator("figure.chart")).to_contain_text("Ownership › The rules")
    await check(page, shots, "12-mastery")
    assert problems.errors == []


async def test_viewer_is_offered_no_upload(
    open_page: OpenPage, course: Course, make_user: UserFactory, shots: Path
) -> None:
    viewer = await make_user("viewer")
    # The owner adds the viewer in the Members screen.
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/members")
    await page.get_by_label("Email").fill(viewer.email)
    await page.get_by_label("Role", exact=True).select_option("viewer")
    await page.get_by_role("button", name="Add", exact=True).click()
    await expect(page.locator(".members")).to_contain_text(viewer.email)
    await check(page, shots, "10-members")

    page, _ = await open_page(viewer)
    await page.get_by_role("link", name="Rust 101").click()
    await expect(page.locator(".badge").first).to_have_text("Viewer")
    await expect(page.locator("tr[data-document=ownership]")).to_be_visible()
    await expect(page.locator("#upload-input")).to_have_count(0)
    await expect(page.get_by_text("Drop PDF or Markdown files here")).to_have_count(0)
    await expect(page.get_by_role("button", name="Delete: ownership")).to_have_count(0)
    await expect(page.get_by_role("link", name="Teacher")).to_have_count(0)
    assert problems.errors == []


async def test_plan(open_page: OpenPage, course: Course, shots: Path) -> None:
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/plans")
    await page.get_by_label("Topic").fill("ownership")
    await page.get_by_role("button", name="Make a plan").click()
    await expect(page.get_by_text("Coverage").first).to_be_visible(timeout=60_000)
    await check(page, shots, "07-plan")
    assert problems.errors == []


NOTE = """## Ownership

A value has one owner[^1], and it is dropped at the end of its owner's scope[^2]. `v[^1]` is code.

## References

[^1]: ownership.md, Ownership › The rules, p. 1
[^2]: ownership.md, *Moves* <script>alert(1)</script>
"""


async def test_note_footnotes_become_a_references_list(web_stack: WebStack, browser: Browser) -> None:
    """A note's `[^n]` citations (as the note writer makes them): superscript numbers carrying the
    source as their title, and the definitions one numbered list, through the sanitiser."""
    context = await new_context(browser)
    page = await context.new_page()
    problems = PageProblems(page)
    await page.goto(f"{web_stack.base}/app/")
    rendered = await page.evaluate(
        """async (text) => {
            const { toSafeHtml } = await import('/app/src/markdown.js');
            const box = document.createElement('div');
            box.innerHTML = toSafeHtml(text);
            return {
              html: box.innerHTML,
              sups: [...box.querySelectorAll('p sup')].map((s) => [s.textContent, s.title]),
              items: [...box.querySelectorAll('ol > li')].map((li) => [li.value, li.innerHTML]),
              afterHeading: box.querySelector('h2:last-of-type + ol') !== null,
              code: box.querySelector('code').textContent,
            };
        }""",
        NOTE,
    )
    assert rendered["sups"] == [
        ["1", "ownership.md, Ownership › The rules, p. 1"],
        ["2", "ownership.md, *Moves* alert(1)"],  # a title is plain text: the tags are left out
    ]
    assert rendered["items"] == [
        [1, "ownership.md, Ownership › The rules, p. 1"],
        [2, "ownership.md, <em>Moves</em> "],  # Markdown kept, the script removed by DOMPurify
    ]
    assert rendered["afterHeading"], rendered["html"]  # the list stands under "References"
    assert rendered["code"] == "v[^1]"  # code is left as written
    assert "[^" not in rendered["html"].replace("<code>v[^1]</code>", "")
    assert "<script" not in rendered["html"]
    assert problems.errors == []
    await context.close()

"""The web app end to end in Chromium: sign in, create a project, drop a Markdown file and watch it reach
ready, ask a question and see the passages from the material, then the answer stream in with a citation
that opens its passage, each confidence label shown as it should be (English and Portuguese), generate
and answer a quiz question, and a viewer who is offered no upload. Every main screen passes axe-core
with no serious or critical violation, and is photographed."""

import json
import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, Route, expect

from tests.conftest import UserFactory
from tests.e2e.conftest import (
    COURSE,
    LOAD,
    QUESTION,
    Course,
    OpenPage,
    WebStack,
    check,
    fresh_page,
    sign_in,
)


async def test_sign_in_create_project_and_upload(
    web_stack: WebStack, browser: Browser, make_user: UserFactory, shots: Path
) -> None:
    user = await make_user("student")
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    await expect(page.get_by_role("heading", name="Sign in to studyAI")).to_be_visible()
    await check(page, shots, "01-sign-in")
    await page.get_by_role("button", name="Use an API key").click()
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
    await expect(page.get_by_text("Drop course files, a folder or a course ZIP here")).to_be_visible()

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
    # The owner invites the viewer by email in the Members screen; the viewer accepts on the Account
    # screen and is then a member.
    owner_page, problems = await open_page(course.owner, f"/p/{course.project_id}/members")
    await owner_page.get_by_label("Email", exact=True).fill(viewer.email)
    await owner_page.get_by_label("Role", exact=True).select_option("viewer")
    await owner_page.get_by_role("button", name="Invite", exact=True).click()
    sent = owner_page.get_by_role("status").filter(has_text=f"Invitation sent to {viewer.email}")
    await expect(sent).to_contain_text("they will see it when they sign in with that address")
    await expect(owner_page.locator("ul.pending-invitations")).to_contain_text(viewer.email)

    page, _ = await open_page(viewer, "/account")
    await page.get_by_role("button", name="Accept: Rust 101").click()
    await expect(page.get_by_role("heading", name="Rust 101", exact=True)).to_be_visible(timeout=LOAD)
    await owner_page.reload()
    await expect(owner_page.locator(".members")).to_contain_text(viewer.email, timeout=LOAD)
    await expect(owner_page.locator("ul.pending-invitations")).not_to_contain_text(viewer.email)
    await check(owner_page, shots, "10-members")

    page, _ = await open_page(viewer)
    await page.get_by_role("link", name="Rust 101").click()
    await expect(page.locator(".badge").first).to_have_text("Viewer")
    await expect(page.locator("tr[data-document=ownership]")).to_be_visible()
    await expect(page.locator("#upload-input")).to_have_count(0)
    await expect(page.get_by_text("Drop course files, a folder or a course ZIP here")).to_have_count(0)
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
    context, page, problems = await fresh_page(browser)
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


# A question per confidence label: the fake chat model's self-check gives P(yes) by a marker word of the
# question (benchmarks/fake_answers.py), the test calibration (tests/e2e/conftest.py) labels it.
LABELLED = {
    "en": {
        "high": QUESTION,
        "medium": "Briefly, what happens to a value when its owner goes out of scope?",
        "low": "Can you guess what happens to a value when its owner goes out of scope?",
    },
    "pt": {
        "high": "O que acontece com um valor quando o dono sai do escopo?",
        "medium": "Resumidamente, o que acontece com um valor quando o dono sai do escopo?",
        "low": "Qual é o seu palpite: o que acontece com um valor quando o dono sai do escopo?",
    },
}
WORDS = {
    "en": {
        "high": "High confidence",
        "medium": "Medium confidence",
        "low": "Low confidence",
        "material": "From your material",
        "check": "Check the passage",
        "unsure": "The material does not let me answer this with confidence.",
        "answer": "the value is dropped",
    },
    "pt": {
        "high": "Confiança alta",
        "medium": "Confiança média",
        "low": "Confiança baixa",
        "material": "Do seu material",
        "check": "Confira o trecho",
        "unsure": "O material não me permite responder a isto com confiança.",
        "answer": "o valor é descartado",
    },
}
SHOT_NUMBER = {"high": 17, "medium": 18, "low": 19}

# Notes, when the first passage from the material appears, what the answer area holds at that moment.
WATCH_EVIDENCE = """() => {
  window.__evidence = null;
  const seen = () => {
    if (window.__evidence !== null) return;
    const reply = document.querySelector('.msg.assistant:last-child');
    if (!reply || !reply.querySelector('.evidence mark')) return;
    const draft = reply.querySelector('[data-streaming=true]');
    window.__evidence = {
      draft: draft ? draft.textContent : null,
      answered: reply.querySelector('.answer.markdown') !== null,
      badge: reply.querySelector('[data-confidence] .badge, .badge[data-confidence]') !== null,
    };
  };
  new MutationObserver(seen).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


async def ask(page: Page, question: str) -> None:
    await page.locator("#question").fill(question)
    await page.locator(".ask-form button[type=submit]").click()


async def test_evidence_shows_before_the_answer(
    web_stack: WebStack, open_page: OpenPage, course: Course
) -> None:
    """The book's words come first: the passages, their key sentence marked, are on the page while the
    model has not written a word; the answer then streams in under them as a draft."""
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/ask")
    await page.evaluate(WATCH_EVIDENCE)
    web_stack.fake.first_delay_s = 1.5
    try:
        await ask(page, QUESTION)
        reply = page.locator(".msg.assistant").last
        evidence = reply.locator(".evidence")
        await expect(evidence.locator(".evidence-title")).to_have_text("From your material", timeout=30_000)
        await expect(evidence.locator("mark").first).to_be_visible()
        await expect(evidence.locator(".passages > li").first).to_contain_text("ownership")  # its document
        seen = await page.evaluate("() => window.__evidence")
        assert seen is not None and seen["draft"] in (None, "") and not seen["answered"], seen
        assert not seen["badge"], seen  # no label before the confidence is known
        # The streaming text is a draft until `done` says how sure it is.
        await expect(reply.locator("[data-streaming=true]")).to_contain_text("Each value", timeout=30_000)
        await expect(reply.locator(".draft-label")).to_have_text("Draft — checking…")
    finally:
        web_stack.fake.first_delay_s = 0.0
    await expect(reply.locator(".answer.markdown")).to_contain_text("the value is dropped", timeout=30_000)
    marks = await page.evaluate(
        "() => ({evidence: performance.getEntriesByName('studyai:evidence')[0]?.startTime,"
        " token: performance.getEntriesByName('studyai:first-token')[0]?.startTime})"
    )
    assert marks["evidence"] is not None and marks["token"] - marks["evidence"] > 500, marks
    # Once answered with high confidence, the passages fold away under the answer.
    await expect(reply.locator(".badge[data-confidence=high]")).to_have_text("High confidence")
    await expect(reply.locator("details.evidence-more")).not_to_have_attribute("open", "")
    assert problems.errors == []


@pytest.mark.parametrize("lang", ["en", "pt"])
async def test_each_confidence_label(
    lang: str, web_stack: WebStack, open_page: OpenPage, course: Course, course_pt: Course, shots: Path
) -> None:
    project = course if lang == "en" else course_pt
    words = WORDS[lang]
    page, problems = await open_page(project.owner, f"/p/{project.project_id}/ask")
    suffix = "" if lang == "en" else "-pt"
    for label, question in LABELLED[lang].items():
        await page.goto(f"{web_stack.base}/app/#/p/{project.project_id}/ask")  # a new chat each
        await expect(page.locator(".msg")).to_have_count(0)
        await ask(page, question)
        reply = page.locator(".msg.assistant").last
        badge = reply.locator(f".badge[data-confidence={label}]")
        await expect(badge).to_have_text(words[label], timeout=60_000)
        await expect(reply).to_have_attribute("data-confidence", label)
        if label == "high":
            await expect(reply.locator(".answer")).to_contain_text(words["answer"])
            await expect(reply.locator(".check-note")).to_have_count(0)
            await expect(reply.locator(".chip")).to_have_count(1)
        elif label == "medium":
            await expect(reply.locator(".answer")).to_contain_text(words["answer"])
            await expect(reply.locator(".check-note")).to_contain_text(words["check"])
            deciding = reply.locator(".passages > li")
            await expect(deciding).to_have_count(1)
            await expect(deciding.locator("mark")).not_to_be_empty()
        else:
            await expect(reply).to_have_attribute("data-outcome", "unsure")
            await expect(reply.locator(".answer")).to_contain_text(words["unsure"])
            await expect(reply.locator(".answer")).not_to_contain_text(
                words["answer"]
            )  # the guess is not shown
            await expect(reply.locator(".evidence-title")).to_have_text(words["material"])
            await expect(reply.locator(".passages mark").first).to_be_visible()
            await expect(reply.locator(".check-note")).to_have_count(0)
        await check(page, shots, f"{SHOT_NUMBER[label]}-ask-{label}{suffix}")
        if label != "high":  # the thread, opened again, shows the label and the passages as stored
            await page.reload()
            stored = page.locator(".msg.assistant").last
            await expect(stored.locator(f".badge[data-confidence={label}]")).to_have_text(words[label])
            await expect(stored.locator(".passages mark").first).to_be_visible()
            await expect(stored.locator(".answer")).to_contain_text(
                words["unsure" if label == "low" else "answer"]
            )
    assert problems.errors == []


UNSURE_CHOICE = {
    "answer": "The material does not let me answer this with confidence. The passages below bear on it.",
    "has_answer": False,
    "citations": [],
    "thread_id": None,
    "outcome": "unsure",
    "language": "en",
    "request_id": "test",
    "confidence": {"p": 0.1, "label": "low", "signals": {"p_top": 0.4}},
    "guess": "B) The value is copied.",
    "passages": [],
    "options_stated": [
        {
            "letter": "A",
            "chunk_id": 1,
            "sentence": "When the owner goes out of scope, the value will be dropped.",
        }
    ],
}


async def test_unsure_options_say_which_the_passages_state(open_page: OpenPage, course: Course) -> None:
    """An unsure question with options: no answer, and each option a passage states, with its sentence
    (the reply is the API's, served by the browser so the test needs no option scorer)."""
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/ask")
    events = "".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n"
        for name, data in (
            ("token", {"text": UNSURE_CHOICE["answer"]}),
            ("citations", []),
            ("done", UNSURE_CHOICE),
        )
    )

    async def reply(route: Route) -> None:
        await route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=events)

    await page.route("**/qa", reply)
    await ask(page, "What happens to a value? A) it is dropped B) it is copied")
    answer = page.locator(".msg.assistant").last
    await expect(answer.locator(".badge[data-confidence=low]")).to_have_text("Low confidence")
    await expect(answer.locator(".options-stated li")).to_have_text(
        "Option A is stated in: When the owner goes out of scope, the value will be dropped."
    )
    await expect(answer).not_to_contain_text("copied")  # the guess
    assert problems.errors == []

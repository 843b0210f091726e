"""Passages and answers as the book shows them, in Chromium against the real stack (tests/e2e/conftest.py):
a course of headings, a fenced code block and formulas is uploaded in English and in Portuguese, and the
fake chat model (benchmarks/fake_answers.py) answers a question about a formula with math. The passages
under an answer and the passage a citation opens keep their code's lines, highlighted; formulas in the
answer and in the passage are typeset by KaTeX (with MathML for screen readers) under the app's CSP, its
fonts loaded; a dollar amount stays text. Each screen passes axe-core in both languages, on a desktop and
on a phone, and is photographed (rendering-*.png).

The Markdown component itself is checked in the page: each math delimiter, highlighted code of the
course languages, a key sentence marked across elements, and the sanitiser's hold on classes and on
KaTeX's untrusted commands."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from benchmarks.stack import indexed_project
from tests.conftest import UserFactory
from tests.e2e.conftest import Course, OpenPage, WebStack, check, fresh_page

BOOK = {
    "en": r"""# Objects and formulas

## 15.5 Objects are mutable

You can change the state of an object by making an assignment to one of its attributes. For example,
to change the size of a rectangle without changing its position, you can modify the values of width
and height:

```python
box.width = box.width + 50
box.height = box.height + 100
```

## Circles

The area of a circle of radius $r$ is $A = \pi r^2$, and its circumference is

$$C = 2 \pi r$$

Its diameter is \(d = 2r\), and the number $\pi$ is about 3.14159.

A ticket costs $5 and a book costs $10: neither amount is a formula.
""",
    "pt": r"""# Objetos e fórmulas

## 15.5 - Objetos são mutáveis

Você pode alterar o estado de um objeto fazendo uma atribuição a um dos seus atributos. Por exemplo,
para mudar o tamanho de um retângulo sem mudar a sua posição, você pode alterar os valores de width e
height:

```python
box.width = box.width + 50
box.height = box.height + 100
```

## Círculos

A área de um círculo de raio $r$ é $A = \pi r^2$, e o seu perímetro é

$$C = 2 \pi r$$

O seu diâmetro é \(d = 2r\), e o número $\pi$ vale cerca de 3,14159.

Um bilhete custa $5 e um livro custa $10: nenhum dos valores é uma fórmula.
""",
}
# The fake chat model answers a question naming a rectangle with the code, one naming a formula with
# math (benchmarks/fake_answers.py WORD_ANSWERS), each citing the passage it comes from.
QUESTIONS = {
    "en": {
        "code": "How do you change the width and height of a rectangle?",
        "math": "What is the formula for the area of a circle?",
    },
    "pt": {
        "code": "Como alterar os valores de width e height de um retângulo?",
        "math": "Qual é a fórmula da área de um círculo?",
    },
}
CODE_LINES = "box.width = box.width + 50\nbox.height = box.height + 100"
SECTION = {"en": "Objects are mutable", "pt": "Objetos são mutáveis"}


@pytest.fixture(scope="module")
async def books(web_stack: WebStack, make_user: UserFactory) -> AsyncIterator[dict[str, Course]]:
    """The course in each language, each in a project of that language (the app speaks it there)."""
    made = {}
    for lang, text in BOOK.items():
        owner = await make_user("teacher")
        name = f"Objects ({lang})"
        made[lang] = Course(
            owner, *await indexed_project(web_stack.base, owner, name, "book.md", text, language=lang)
        )
    yield made


async def ask(page: Page, question: str) -> Locator:
    """Asks on the open chat; the reply, once its answer is in."""
    await page.locator("#question").fill(question)
    await page.locator(".ask-form button[type=submit]").click()
    reply = page.locator(".msg.assistant").last
    await expect(reply.locator(".answer.markdown")).to_be_visible(timeout=60_000)
    return reply


async def assert_code_keeps_its_lines(code: Locator) -> None:
    await expect(code).to_be_visible()
    assert CODE_LINES in (await code.text_content() or "")
    await expect(code.locator("span.hljs-number")).to_have_count(2)  # 50 and 100, highlighted
    lines = await code.evaluate(
        "(el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight))"
    )
    assert lines >= 2, lines  # shown on lines of their own, not run together


# What a rendered text holds of math: formulas typeset, their MathML (with the TeX) and the text left
# outside the formulas (where no delimiter or TeX command may remain).
MATH = """(el) => {
  const outside = el.cloneNode(true);
  outside.querySelectorAll('.katex').forEach((k) => k.remove());
  const mathml = el.querySelector('.katex-mathml');
  return {
    katex: el.querySelectorAll('.katex').length,
    mathml: el.querySelectorAll('.katex math annotation[encoding="application/x-tex"]').length,
    display: el.querySelectorAll('.katex-display').length,
    hidden: [...el.querySelectorAll('.katex-html')].every((h) => h.getAttribute('aria-hidden') === 'true'),
    waiting: el.querySelectorAll('[data-math]:not([data-typeset])').length,
    styled: [...el.querySelectorAll('.katex .strut')].every((s) => s.style.height !== ''),
    mathmlClipped: mathml !== null && getComputedStyle(mathml).position === 'absolute',
    text: outside.textContent,
  };
}"""


async def assert_math(container: Locator, *, formulas: int) -> dict[str, Any]:
    await expect(container.locator(".katex").first).to_be_visible()
    got = await container.evaluate(MATH)
    assert got["katex"] >= formulas and got["mathml"] == got["katex"], got
    assert got["display"] >= 1 and got["hidden"] and got["waiting"] == 0, got
    # KaTeX's inline styles applied (the CSP lets the DOM set them) and its stylesheet loaded.
    assert got["styled"] and got["mathmlClipped"], got
    for raw in ("$r$", "$$", "\\pi", "\\(", "r^2"):
        assert raw not in got["text"], (raw, got["text"])
    # The dollar amounts are text, in a paragraph with no formula.
    assert "$5" in got["text"] and "$10" in got["text"], got["text"]
    amounts = container.locator("p", has_text="$5")
    await expect(amounts.locator(".katex")).to_have_count(0)
    return got


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
@pytest.mark.parametrize("lang", ["en", "pt"])
async def test_passages_and_answers_render_as_the_book_shows_them(
    lang: str, phone: bool, web_stack: WebStack, open_page: OpenPage, books: dict[str, Course], shots: Path
) -> None:
    book = books[lang]
    page, problems = await open_page(book.owner, f"/p/{book.project_id}/ask", phone=phone)
    suffix = f"-{lang}{'-phone' if phone else ''}"

    # Code: the answer, the passages it came from and the passage its citation opens keep the code's lines.
    reply = await ask(page, QUESTIONS[lang]["code"])
    await assert_code_keeps_its_lines(reply.locator(".answer pre code"))
    await reply.locator("details.evidence-more summary").click()
    passage = reply.locator(".passages > li", has=page.locator("pre code")).first
    await assert_code_keeps_its_lines(passage.locator("pre code"))
    await expect(passage.locator("mark").first).to_be_visible()  # its key sentence, still marked
    await expect(passage.locator("p.sentence")).to_have_count(0)  # in place, found across the code
    await reply.locator(".chip").first.click()
    panel = page.get_by_role("complementary")
    whole = panel.locator(".passage-text")
    # Its heading shown as one, not as "## …" (quoted: outside the page's outline of headings).
    await expect(whole.locator("[data-heading='2']", has_text=SECTION[lang])).to_have_count(1)
    await expect(whole.get_by_role("heading")).to_have_count(0)
    await assert_code_keeps_its_lines(whole.locator("pre code"))
    await expect(whole).not_to_contain_text("```")
    await check(page, shots, f"rendering-code{suffix}")
    await page.keyboard.press("Escape")

    # Math: the answer's formulas and the cited passage's, typeset; the dollar amounts left as text.
    await page.goto(f"{web_stack.base}/app/#/p/{book.project_id}/ask")  # a new chat
    await expect(page.locator(".msg")).to_have_count(0)
    reply = await ask(page, QUESTIONS[lang]["math"])
    await assert_math(reply.locator(".answer.markdown"), formulas=3)  # r, A = πr², C = 2πr (displayed)
    if phone:  # the passage opens over the answer there: the answer on its own first
        await check(page, shots, f"rendering-answer{suffix}")
    await reply.locator(".chip").first.click()
    await assert_math(page.get_by_role("complementary").locator(".passage-text"), formulas=5)  # and d, π
    fonts = await page.evaluate(
        "async () => { await document.fonts.ready; return [...document.fonts]"
        ".filter((f) => f.family.includes('KaTeX') && f.status === 'loaded').length; }"
    )
    assert fonts >= 2, fonts  # font-src 'self' serves KaTeX's fonts (Main, Math)
    await check(page, shots, f"rendering-math{suffix}")
    assert problems.errors == []  # no CSP violation, no failed font or module


# The Markdown component alone, in the page: every case is rendered with KaTeX and highlight.js loaded.
RENDER = """async (cases) => {
  const { html, render } = await import('/app/src/lib.js');
  const { Markdown } = await import('/app/src/markdown.js');
  const { load } = await import('/app/src/typeset.js');
  await Promise.all([load('katex'), load('highlight')]);
  const out = {};
  for (const [name, [text, highlight]] of Object.entries(cases)) {
    const box = document.createElement('div');
    document.body.append(box);
    render(html`<${Markdown} text=${text} highlight=${highlight || ''} />`, box);
    const root = box.firstElementChild;
    out[name] = {
      formulas: [...root.querySelectorAll('[data-math]')]
        .map((m) => [m.dataset.math, m.querySelector('annotation')?.textContent]),
      text: root.textContent,
      code: root.querySelector('pre code')?.textContent ?? null,
      classes: [...root.querySelectorAll('[class]')].flatMap((e) => [...e.classList]),
      marks: [...root.querySelectorAll('mark[data-sentence]')].map((m) => m.textContent),
      sentenceAbove: root.querySelector('p.sentence mark') !== null,
      links: root.querySelectorAll('a').length,
      styles: [...root.querySelectorAll('[style]')].map((e) => e.getAttribute('style')).join(';'),
    };
    render(null, box);
    box.remove();
  }
  return out;
}"""

CASES: dict[str, tuple[str, str]] = {
    "delimiters": (r"Inline $x^2$ and \(y_1\); displayed $$a+b$$ and" + "\n\n\\[\n\\frac{1}{2}\n\\]\n", ""),
    "dollars": ("It costs $5 and $10, or US$5 to US$10, and $5.00 – $10.00.", ""),
    "rust": ("```rust,ignore\nfn main() {\n    let x = 5;\n}\n```", ""),
    "bash": ('```console\n$ cargo run\n```\n\n```bash\necho "$HOME"\n```', ""),
    "json": ('```json\n{"width": 50, "ok": true}\n```', ""),
    "sentence": (
        "## Moves\n\nAssigning a String **moves** it: $s_1$ is no longer valid.\n\n"
        "```rust\nlet s2 = s1;\n```",
        "## Moves Assigning a String **moves** it: $s_1$ is no\nlonger valid.",
    ),
    "fenced": (
        "For example, modify width and height:\n\n```python\nbox.width = 1\n```\n\nDone.",
        "For example, modify width and\nheight:\n\n```python\nbox.width = 1\n```",
    ),
    "cut_off": ("The rest of a passage.", "A sentence the excerpt left out."),
    "untrusted": (
        r"$\href{javascript:alert(1)}{x}$ $\htmlStyle{color:red}{y}$ $\htmlClass{button}{z}$"
        '\n\n<code class="button danger">c</code> <span class="hljs-keyword">s</span>'
        ' <b class="primary">b</b>',
        "",
    ),
}


async def test_the_markdown_component_typesets_math_and_code(web_stack: WebStack, browser: Browser) -> None:
    context, page, problems = await fresh_page(browser)
    await page.goto(f"{web_stack.base}/app/")
    got = await page.evaluate(RENDER, CASES)
    # Every delimiter: $…$ and \(…\) inline, $$…$$ and \[…\] displayed; MathML carries the TeX.
    assert got["delimiters"]["formulas"] == [
        ["inline", "x^2"],
        ["inline", "y_1"],
        ["display", "a+b"],
        ["display", "\\frac{1}{2}"],
    ]
    assert "$" not in got["delimiters"]["text"]
    # Dollar amounts are not math.
    assert got["dollars"]["formulas"] == []
    assert got["dollars"]["text"].strip() == "It costs $5 and $10, or US$5 to US$10, and $5.00 – $10.00."
    # Code of the course languages, highlighted, its lines kept.
    assert got["rust"]["code"] == "fn main() {\n    let x = 5;\n}\n"
    assert {"hljs", "language-rust", "hljs-keyword", "hljs-number"} <= set(got["rust"]["classes"])
    assert {"language-console", "language-bash", "hljs-meta", "hljs-built_in"} <= set(got["bash"]["classes"])
    assert {"hljs-attr", "hljs-number", "hljs-literal"} <= set(got["json"]["classes"])
    # The key sentence, found across a heading, emphasis and a formula, is marked piece by piece.
    marks = got["sentence"]["marks"]
    assert "".join(marks).replace(" ", "").startswith("MovesAssigningaString"), marks
    assert "moves" in marks and marks[-1].endswith("no longer valid."), marks
    assert got["sentence"]["code"] == "let s2 = s1;\n"
    # Across a code block: its fence and language are not shown, its code is marked.
    assert not got["fenced"]["sentenceAbove"] and "box.width = 1" in "".join(got["fenced"]["marks"])
    # A sentence the excerpt does not hold stands marked above it.
    assert got["cut_off"]["sentenceAbove"] and got["cut_off"]["marks"] == ["A sentence the excerpt left out."]
    # Untrusted TeX does not link, style or class; a document's own classes are dropped, code's kept.
    untrusted = got["untrusted"]
    assert untrusted["links"] == 0 and "red" not in untrusted["styles"]
    assert not {"button", "danger", "primary"} & set(untrusted["classes"]), untrusted["classes"]
    assert "hljs-keyword" not in untrusted["classes"]  # a highlight class outside code is a document's
    assert problems.errors == []
    await context.close()

"""The web app's budgets, measured in Debian's Chromium against `studyai up` on this machine (embedded
Postgres and Redis, real workers and embedding model; the chat model is the fake of
benchmarks/fake_answers.py, so the figures are the app's and the API's, not a model's):

- first load: bytes transferred (gzip, headers included, every response of the load: HTML, scripts,
  styles, /openapi.json and the API calls) with a cold cache, for the sign-in screen and for a signed-in
  tab's project list; budget 300 KB;
- time to interactive: navigation start to the screen's first usable element in the DOM (the key field;
  the first project in the list), seen by a MutationObserver installed before the page loads; budget 1 s;
- streamed answer: the page's own mark when it reads the first `token` event of POST /qa from the stream
  to the moment that text is in the DOM, and to the next frame after it (painted); budget 300 ms. Also,
  for reference, from the fake model sending its first answer characters (wall clock) to the text in the
  DOM, which adds the API's own work.

    python benchmarks/load/web_budget.py [--runs 5]   ->  benchmarks/reports/web_budget.md
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, async_playwright, expect

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `python benchmarks/load/web_budget.py`

from benchmarks.fake_answers import CitingChatServer
from benchmarks.report import report_path, write_report
from benchmarks.stack import indexed_project, studyai_up

REPORT = report_path("web_budget")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update"]
BUDGET_BYTES, BUDGET_TTI_MS, BUDGET_TOKEN_MS = 300 * 1024, 1000.0, 300.0
COURSE = """# Ownership

## The rules

Each value in Rust has an owner. There can only be one owner at a time. When the owner goes out of
scope, the value will be dropped.
"""

# Installed before any page script: when each watched selector first matches (with text, for the
# answer), the DOM time and the next frame's time, in performance.now() ms.
WATCH = """
window.__seen = {};
const watched = {key: '#api-key', project: '.projects li', answer: '[data-streaming=true]'};
new MutationObserver(() => {
  const now = performance.now();
  for (const [name, selector] of Object.entries(watched)) {
    if (window.__seen[name]) continue;
    const node = document.querySelector(selector);
    if (node && (name !== 'answer' || node.textContent.length > 0)) {
      window.__seen[name] = {dom: now, epoch: performance.timeOrigin + now};
      requestAnimationFrame(() => { window.__seen[name].frame = performance.now(); });
    }
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


# Where a load's time goes: the HTML in, the last static file in, the last API answer in (ms).
PHASES = """() => {
  const resources = performance.getEntriesByType('resource');
  const end = (test) => Math.max(0, ...resources.filter((r) => test(r.name)).map((r) => r.responseEnd));
  return {
    html_ms: performance.getEntriesByType('navigation')[0].responseEnd,
    files_ms: end((name) => name.includes('/app/')),
    api_ms: end((name) => !name.includes('/app/')),
  };
}"""


async def first_load(browser: Browser, base: str, key: str | None, selector: str) -> dict[str, float]:
    context = await browser.new_context()  # a cold cache each time
    await context.add_init_script(WATCH)
    if key:
        await context.add_init_script(f"sessionStorage.setItem('studyai.key', {key!r})")
    page = await context.new_page()
    responses: list[Any] = []
    page.on("requestfinished", lambda request: responses.append(request))
    await page.goto(f"{base}/app/")
    await page.wait_for_function(f"() => window.__seen[{selector!r}]")
    await page.wait_for_load_state("networkidle")
    sizes = [await request.sizes() for request in responses]
    transferred = sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes)
    ready = await page.evaluate(f"() => window.__seen[{selector!r}].dom")
    timing = await page.evaluate(PHASES)
    await context.close()
    return {"bytes": transferred, "requests": len(sizes), "tti_ms": ready, **timing}


async def streamed_answer(page: Page, fake: CitingChatServer, question: str, n: int) -> dict[str, float]:
    """Asks the n-th question (from 1) of the thread; its timings once the whole answer is shown."""
    reset = "() => { delete window.__seen.answer; performance.clearMarks('studyai:first-token') }"
    await page.evaluate(reset)
    await page.get_by_label("Your question").fill(question)
    await page.get_by_role("button", name="Ask", exact=True).click()
    await page.wait_for_function("() => window.__seen.answer && window.__seen.answer.frame")
    await expect(page.locator(".answer.markdown")).to_have_count(n, timeout=60_000)  # done, not streaming
    seen = await page.evaluate("() => window.__seen.answer")
    token = await page.evaluate("() => performance.getEntriesByName('studyai:first-token')[0].startTime")
    return {
        "event_to_dom_ms": seen["dom"] - token,
        "event_to_frame_ms": seen["frame"] - token,
        "model_to_dom_ms": seen["epoch"] - fake.first_text_at[-1] * 1000,
    }


async def measure(base: str, fake: CitingChatServer, key: str, project: str, runs: int) -> dict[str, Any]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True
        )
        await first_load(browser, base, None, "key")  # warms the server's file cache, not the browser's
        sign_in = [await first_load(browser, base, None, "key") for _ in range(runs)]
        projects = [await first_load(browser, base, key, "project") for _ in range(runs)]
        context = await browser.new_context()
        await context.add_init_script(WATCH)
        await context.add_init_script(f"sessionStorage.setItem('studyai.key', {key!r})")
        page = await context.new_page()
        await page.goto(f"{base}/app/#/p/{project}/ask")
        await page.get_by_label("Your question").wait_for()
        answers = []
        for i in range(runs + 1):
            question = f"What happens when the owner goes out of scope? ({i})"
            answer = await streamed_answer(page, fake, question, i + 1)
            if i:  # the first is a warm-up (the API's first QA request loads its graph)
                answers.append(answer)
        await browser.close()
    return {"sign_in": sign_in, "projects": projects, "answers": answers}


def worst(rows: list[dict[str, float]], key: str) -> float:
    return max(row[key] for row in rows)


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def report(results: dict[str, Any], runs: int) -> str:
    loads = [
        ("Sign-in screen (fresh tab)", results["sign_in"]),
        ("Project list (signed-in tab)", results["projects"]),
    ]
    lines = [
        "# Web app budgets",
        "",
        f"`python benchmarks/load/web_budget.py --runs {runs}` on {time.strftime('%Y-%m-%d')}:",
        "Debian Chromium (headless) against `studyai up` on this machine (embedded Postgres and Redis,",
        "real workers and embedding model; the chat model is benchmarks/fake_answers.py, streaming",
        "6 characters every 30 ms).",
        "Each load is a new browser context (cold cache). Budgets: first load ≤ 300 KB transferred,",
        "interactive ≤ 1 s, streamed text in the page ≤ 300 ms after the API's first token event.",
        "",
        f"Machine: {os.cpu_count()} CPUs, load average {results['load'][0]:.1f} before and"
        f" {results['load'][1]:.1f} after the run (other work shares them).",
        "",
        "| first load | requests | transferred (max) | interactive: median | max"
        " | HTML / files / API in (median) | within budget |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for name, rows in loads:
        ok = worst(rows, "bytes") <= BUDGET_BYTES and worst(rows, "tti_ms") <= BUDGET_TTI_MS
        lines.append(
            f"| {name} | {int(median(rows, 'requests'))} | {worst(rows, 'bytes') / 1024:.1f} KB |"
            f" {median(rows, 'tti_ms'):.0f} ms | {worst(rows, 'tti_ms'):.0f} ms |"
            f" {' / '.join(f'{median(rows, phase):.0f}' for phase in ('html_ms', 'files_ms', 'api_ms'))} ms"
            f" | {'yes' if ok else 'NO'} |"
        )
    answers = results["answers"]
    ok = worst(answers, "event_to_frame_ms") <= BUDGET_TOKEN_MS
    lines += [
        "",
        f"| streamed answer (n={len(answers)}) | median | max |",
        "| --- | ---: | ---: |",
        f"| first `token` event read → text in the DOM | {median(answers, 'event_to_dom_ms'):.1f} ms |"
        f" {worst(answers, 'event_to_dom_ms'):.1f} ms |",
        f"| first `token` event read → next frame (painted) | {median(answers, 'event_to_frame_ms'):.1f} ms |"
        f" {worst(answers, 'event_to_frame_ms'):.1f} ms |",
        f"| model sends the first answer characters → text in the DOM (API included) |"
        f" {median(answers, 'model_to_dom_ms'):.1f} ms | {worst(answers, 'model_to_dom_ms'):.1f} ms |",
        "",
        f"Streamed text within 300 ms of the first token event: {'yes' if ok else 'NO'}.",
        "",
        "Transferred bytes are Chromium's own count per response (encoded body + headers). The app's",
        "static files are gzipped by the API (backend/frontend.py); /openapi.json, which the app reads once",
        "after sign-in to know which optional routes the server has, is FastAPI's and not compressed.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="studyai-web-") as folder, CitingChatServer() as fake:
        env = {"LLM_BASE_URL": fake.url, "LLM_MODEL": "fake", "LLM_STRUCTURED_OUTPUT": "llama-grammar"}
        with studyai_up(Path(folder) / "data", model="qwen2.5-coder-0.5b-instruct", extra_env=env) as stack:
            headers = stack.new_user("budget@example.org")
            project, _ = asyncio.run(indexed_project(stack.base, headers, "Budget", "ownership.md", COURSE))
            key = headers["Authorization"].removeprefix("Bearer ")
            before = os.getloadavg()[0]
            results = asyncio.run(measure(stack.base, fake, key, project, args.runs))
            results["load"] = (before, os.getloadavg()[0])
    text = report(results, args.runs)
    write_report(REPORT, text)
    print(text)


if __name__ == "__main__":
    main()

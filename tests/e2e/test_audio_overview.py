"""Audio overviews in Chromium, in English and Portuguese, on a desktop and a phone: a student picks the
course and one or two voices, follows the job's progress, then plays the recording (its duration is
known and its time advances) with the script beside it: the line being heard is marked, a line opens
the passage it rests on, and the recording downloads as OGG and MP3. A language without an installed
voice is said so before anything is asked. Every screen passes axe-core and is photographed (audio-*.png).

The job runs in the test (workers/jobs/audio.py: the real voices, database and embeddings) with the
stack's fake chat model, whose script cites the excerpts it was shown (benchmarks/fake_answers.py
script_reply); the API's queue records what it enqueued, since the session's worker has no chat model."""

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from playwright.async_api import Page, expect

from core.jobs.specs import MakeAudioOverview
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.speech import voices
from tests.conftest import changed_runtime
from tests.e2e.conftest import LOAD, Course, OpenPage, WebStack, check
from tests.workers.runtime import job_runtime
from workers.jobs.audio import make_audio_overview

# The audio element's state, read in the page.
DURATION = (
    "() => { const a = document.querySelector('audio');"
    " return a && Number.isFinite(a.duration) ? a.duration : 0; }"
)
CURRENT_TIME = "() => document.querySelector('audio').currentTime"


@dataclass
class AudioJobs:
    """What the API enqueued, and the runtime to run it with (the stack's fake chat model)."""

    runtime: Runtime
    enqueued: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
        self.enqueued.append((args, kwargs))

    async def run_last(self) -> dict[str, Any]:
        (name, project_id, user_id, overview_id), _ = self.enqueued[-1]
        assert name == "make_audio_overview"
        args = MakeAudioOverview(UUID(project_id), UUID(user_id), UUID(overview_id))
        return await make_audio_overview(self.runtime, args)


@pytest.fixture(scope="module")
async def audio_jobs(
    web_stack: WebStack, settings: Settings, services: ServiceUrls, course: Course, course_pt: Course
) -> AsyncIterator[AudioJobs]:
    """Once both courses are indexed (their uploads need the real queue), the API's queue records."""
    urls = dataclasses.replace(services, llm_base_url=web_stack.fake.url)
    async with job_runtime(settings, urls, pool_size=2) as runtime:
        jobs = AudioJobs(runtime)
        with changed_runtime(web_stack.app, redis=jobs):
            yield jobs


async def until(page: Page, script: str, timeout_s: float = LOAD / 1000) -> None:
    """Polls `script` (a function's source) in the page until it answers true. Playwright's own
    wait_for_function evaluates a string in the page, which the app's CSP (no unsafe-eval) refuses."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await page.evaluate(script):
        assert asyncio.get_running_loop().time() < deadline, f"never true: {script}"
        await asyncio.sleep(0.1)


async def make_overview(page: Page, jobs: AudioJobs, *, make: str, voices_label: str) -> None:
    """Picks the course, the voices, asks; the job runs; the player appears."""
    await page.get_by_role("checkbox").first.check()
    await page.get_by_role("radio", name=voices_label).check()
    await page.get_by_role("button", name=make).click()
    await expect(page.locator(".job")).to_be_visible(timeout=LOAD)  # the job's progress, queued
    result = await jobs.run_last()
    assert result["status"] == "succeeded", result
    assert result["dropped_lines"] == 1  # the fake model's line citing an excerpt never shown
    await expect(page.locator("audio")).to_be_attached(timeout=LOAD)


async def plays(page: Page) -> None:
    """The recording's duration is known, and playing from a line advances its time and marks it."""
    await until(page, f"() => ({DURATION})() > 1")
    last = page.locator(".transcript li").last
    await last.get_by_role("button").first.click()  # its time: plays from the line's start
    await expect(last).to_have_attribute("aria-current", "true", timeout=LOAD)
    start = await page.evaluate(CURRENT_TIME)
    await until(page, f"() => document.querySelector('audio').currentTime > {start} + 0.2")


async def saved(page: Page, button: str) -> bytes:
    async with page.expect_download() as info:
        await page.get_by_role("button", name=button).click()
    return Path(await (await info.value).path()).read_bytes()


async def test_an_overview_in_english_plays_with_its_transcript(
    open_page: OpenPage, course: Course, audio_jobs: AudioJobs, shots: Path
) -> None:
    page, problems = await open_page(course.owner, f"/p/{course.project_id}/audio")
    await expect(page.get_by_role("heading", name="New audio overview")).to_be_visible(timeout=LOAD)
    await check(page, shots, "audio-new-en")
    await make_overview(page, audio_jobs, make="Make audio overview", voices_label="Two hosts taking turns")

    lines = page.locator(".transcript li")
    await expect(lines.first).to_contain_text("Host 1")
    await expect(lines.nth(1)).to_contain_text("Host 2")
    await plays(page)
    await check(page, shots, "audio-player-en")

    # A line opens the passage it rests on, beside the transcript.
    await lines.first.locator(".line-text").click()
    panel = page.get_by_role("complementary")
    await expect(panel.locator(".passage-text")).to_contain_text("owner", timeout=LOAD)
    await check(page, shots, "audio-passage-en")

    ogg, mp3 = await saved(page, "Download OGG"), await saved(page, "Download MP3")
    assert ogg[:4] == b"OggS" and len(ogg) > 5000
    assert mp3[:3] == b"ID3" or mp3[0] == 0xFF

    # The same overview on a phone, listed on the Audio screen.
    phone, phone_problems = await open_page(course.owner, page.url.split("#", 1)[1], phone=True)
    await expect(phone.locator(".transcript li").first).to_be_visible(timeout=LOAD)
    await until(phone, f"() => ({DURATION})() > 1")
    await check(phone, shots, "audio-phone-en")
    await phone.get_by_role("link", name="Audio").first.click()
    await expect(phone.get_by_role("heading", name="Your audio overviews")).to_be_visible()
    await check(phone, shots, "audio-list-phone-en")
    assert problems.errors == [] and phone_problems.errors == []


async def test_an_overview_in_portuguese_is_spoken_by_espeak_ng(
    open_page: OpenPage, course_pt: Course, audio_jobs: AudioJobs, shots: Path
) -> None:
    page, problems = await open_page(course_pt.owner, f"/p/{course_pt.project_id}/audio")
    await expect(page.get_by_role("heading", name="Novo resumo em áudio")).to_be_visible(timeout=LOAD)
    await make_overview(page, audio_jobs, make="Fazer resumo em áudio", voices_label="Um narrador")
    await expect(page.get_by_text("espeak-ng:pt-br")).to_be_visible()
    await plays(page)
    await page.locator(".transcript li .line-text").first.click()
    await expect(page.get_by_role("complementary").locator(".passage-text")).to_contain_text(
        "dono", timeout=LOAD
    )
    await check(page, shots, "audio-player-pt")
    phone, phone_problems = await open_page(course_pt.owner, page.url.split("#", 1)[1], phone=True)
    await expect(phone.locator(".transcript li").first).to_be_visible(timeout=LOAD)
    await check(phone, shots, "audio-phone-pt")
    assert problems.errors == [] and phone_problems.errors == []


async def test_a_language_without_a_voice_is_said_before_asking(
    open_page: OpenPage,
    course_pt: Course,
    audio_jobs: AudioJobs,
    shots: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(voices.shutil, "which", lambda name: None)  # the API's process: no espeak-ng
    page, problems = await open_page(course_pt.owner, f"/p/{course_pt.project_id}/audio")
    said = page.get_by_role("alert")
    await expect(said).to_contain_text("Nenhuma voz está instalada para português", timeout=LOAD)
    await page.get_by_role("checkbox").first.check()
    await expect(page.get_by_role("button", name="Fazer resumo em áudio")).to_be_disabled()
    await check(page, shots, "audio-no-voice-pt")
    assert problems.errors == []

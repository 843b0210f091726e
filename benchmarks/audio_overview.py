"""An audio overview of one real chapter in each language, made by the real embedded chat model (the
local Qwen2.5 1.5B) and the real offline voices: a Rust book chapter in English (Piper), a Pense em Python
chapter in Portuguese (espeak-ng). For each it prints the recording's length, the time to make it (the
script's generation, the line check and the rendering apart), how many lines the job's check dropped
(workers/jobs/audio_check.py: the judge did not find them in their passages), and the groundedness of the
kept script: the project's judge (agents/groundedness, as workers/jobs/judge.py runs it) on each kept
line's sentences against the passage the line cites, run again here (the same judge as the job's check,
so below 1.00 only where its replies vary between runs).

Everything runs in this process on a stack of its own (a temporary data folder: embedded Postgres, Redis
and the llama.cpp server; the assembled weights are read from the repo's .cache/models):

    .venv/bin/python -m benchmarks.audio_overview [--voices 2] [--keep DIR]

`--keep DIR` writes each overview's OGG and MP3 and its script (JSON) there, to listen to."""

import argparse
import asyncio
import hashlib
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from agents.groundedness import JudgeChunk, judge_answer, judge_config
from core.jobs.specs import IndexDocument, MakeAudioOverview
from core.runtime import Runtime, open_runtime
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, projects
from core.store.content import audio, documents
from core.store.sql.migrations import apply_migrations
from workers.jobs.audio import make_audio_overview
from workers.jobs.index import index_document

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CHAPTERS = {
    "en": ("Rust book", DATA / "rust-book" / "src" / "ch04-01-what-is-ownership.md"),
    "pt": ("Pense em Python", DATA / "pense-python" / "03-funcoes.md"),
}


async def overview_of(runtime: Runtime, language: str, voices: int) -> dict[str, Any]:
    book, path = CHAPTERS[language]
    async with runtime.pool.connection() as conn:
        user = await accounts.ensure_account(conn, email=f"audio-{uuid.uuid4()}@example.org")
        project = await projects.create_project(
            conn, user_id=user.id, name=book, description="", language=language
        )
        content = path.read_bytes()
        digest = hashlib.sha256(content).hexdigest()
        document = await documents.create_document(
            conn, project_id=project.id, user_id=user.id, title=path.stem, filename=path.name,
            source_type="markdown", kind="uploaded", content=content, content_hash=digest,
        )  # fmt: skip
        assert document is not None
    indexed = await index_document(runtime, IndexDocument(project.id, document.id, 1))
    assert indexed["status"] == "succeeded", indexed
    overview_id = uuid.uuid4()
    scope = {"project_id": project.id, "user_id": user.id}
    async with runtime.pool.connection() as conn:
        await audio.create_audio_job(
            conn,
            **scope,
            overview_id=overview_id,
            request={"document_ids": [str(document.id)], "voices": voices},
        )
    started = time.perf_counter()
    result = await make_audio_overview(runtime, MakeAudioOverview(project.id, user.id, overview_id))
    total_s = time.perf_counter() - started
    assert result["status"] == "succeeded", result
    async with runtime.pool.connection() as conn:
        job = await audio.get_audio_job(conn, **scope, overview_id=overview_id)
        ogg = await audio.audio_file(conn, **scope, overview_id=overview_id, fmt="ogg")
        mp3 = await audio.audio_file(conn, **scope, overview_id=overview_id, fmt="mp3")
    assert job is not None and job.script is not None
    return {
        "book": book, "chapter": path.name, "result": result, "total_s": total_s, "script": job.script,
        "ogg": bytes(ogg or b""), "mp3": bytes(mp3 or b""),
    }  # fmt: skip


async def groundedness(runtime: Runtime, script: list[dict[str, Any]]) -> tuple[float, int, int, float]:
    """Supported claims / claims over every line (each line judged against its cited passage), the
    lines whose every claim is supported, the lines, and the judging time."""
    assert runtime.llm is not None
    supported = claims = whole = 0
    started = time.perf_counter()
    for line in script:
        chunks = [
            JudgeChunk(c["chunk_id"], await chunk_text(runtime, c["chunk_id"])) for c in line["citations"]
        ]
        judgement = await judge_answer(
            runtime.llm,
            question=line["text"],
            answer=line["text"],
            chunks=chunks,
            mode=runtime.chat.structured_mode,
            embeddings=runtime.embeddings,
            config=judge_config(runtime.thresholds),
        )
        supported += sum(claim.supported for claim in judgement.claims)
        claims += len(judgement.claims)
        whole += all(claim.supported for claim in judgement.claims)
    return (supported / claims if claims else 1.0), whole, len(script), time.perf_counter() - started


async def chunk_text(runtime: Runtime, chunk_id: int) -> str:
    async with runtime.pool.connection() as conn:
        row = await (await conn.execute("SELECT text FROM chunks WHERE id = %s", (chunk_id,))).fetchone()
    return str(row["text"]) if row else ""  # the pool reads rows as dicts


def report(language: str, made: dict[str, Any], voices: int, share: float, whole: int, judge_s: float) -> str:
    result, script = made["result"], made["script"]
    judged_out = sum("judge did not find" in reason for reason in result["dropped"])
    seconds = {stage: ms / 1000 for stage, ms in result["timings_ms"].items()}
    words = statistics.mean(len(line["text"].split()) for line in script)
    return (
        f"{language} {made['book']} ({made['chapter']}), {result['voice']}, {voices} voice(s):"
        f" audio {result['duration_ms'] / 1000:.1f} s; made in {made['total_s']:.1f} s"
        f" (script {seconds['script']:.1f} s, checking {seconds['checking']:.1f} s,"
        f" rendering {seconds['rendering']:.1f} s, encoding {seconds['encoding']:.1f} s); {len(script)} lines"
        f" kept ({result['dropped_lines']} dropped, {judged_out} of them by the check),"
        f" {words:.0f} words a line;"
        f" groundedness {share:.2f} of claims, {whole}/{len(script)} lines wholly supported"
        f" (judged in {judge_s:.0f} s)"
    )


async def main(voices: int, keep: Path | None) -> None:
    with tempfile.TemporaryDirectory(prefix="studyai-audio-") as data_dir:
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, STUDYAI_DATA_DIR=data_dir, DATABASE_URL=None, REDIS_URL=None, LLM_BASE_URL=None,
            LLM_MODELS_DIR=REPO / ".cache" / "models", RATE_LIMIT_ENABLED=False,
        )  # fmt: skip
        with EmbeddedServices(settings, llm=True) as urls:
            apply_migrations(urls.database_url)
            async with open_runtime(settings, urls, pool_size=4) as runtime:
                for language in CHAPTERS:
                    made = await overview_of(runtime, language, voices)
                    share, whole, _, judge_s = await groundedness(runtime, made["script"])
                    print(report(language, made, voices, share, whole, judge_s))
                    if keep is not None:
                        keep.mkdir(parents=True, exist_ok=True)
                        (keep / f"overview-{language}.ogg").write_bytes(made["ogg"])
                        (keep / f"overview-{language}.mp3").write_bytes(made["mp3"])
                        text = json.dumps(made["script"], ensure_ascii=False, indent=1)
                        (keep / f"overview-{language}.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--voices", type=int, choices=(1, 2), default=2)
    parser.add_argument("--keep", type=Path, default=None, help="write the recordings and scripts here")
    options = parser.parse_args()
    asyncio.run(main(options.voices, options.keep))

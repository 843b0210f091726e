"""arq job functions. `ctx` carries the pool, embeddings and settings opened in worker start-up."""

import asyncio
import logging
from typing import Any

import psycopg
from arq import Retry

from core.language import TS_CONFIG, resolve_language
from core.settings import Settings
from core.store import chunks as chunk_store
from core.store import document_index, item_sources, jobs
from core.store.document_index import VersionToIndex
from core.store.jobs import index_job_id
from workers.chunking import ChunkDraft, ChunkingConfig, chunk_document
from workers.embedding import embed_missing
from workers.parsing.bounded import ParseLimits, parse_bounded
from workers.parsing.types import ParsedDocument, ParseError
from workers.quarantine import Quarantine

log = logging.getLogger(__name__)

# Failures worth another try: the database or the network blinked, not the file.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (psycopg.OperationalError, ConnectionError, TimeoutError)


class JobAbandoned(Exception):
    """The job cannot finish and should not retry; the message is the reason shown to the user."""


async def index_document(
    ctx: dict[str, Any], project_id: str, document_id: str, version: int
) -> dict[str, Any]:
    """One attempt, within INDEX_JOB_TIMEOUT_S. A job whose worker died under it before runs alone
    (workers/quarantine.py); one that a graceful stop cancels goes back to `queued` for arq to rerun."""
    pool, settings = ctx["pool"], ctx["settings"]
    ids = {"project_id": project_id, "job_id": index_job_id(document_id, version)}
    try:
        async with pool.connection() as conn:
            state = await jobs.attempt_state(conn, **ids)
    except TRANSIENT_ERRORS:  # the attempt's own start meets the same error and retries
        state = None
    suspect = state is not None and (state.status == "running" or state.deaths > 0)
    quarantine: Quarantine = ctx.get("quarantine") or Quarantine()
    try:
        # The limit covers a suspect's wait too: arq's own timeout, later, would leave the row running.
        async with asyncio.timeout(settings.index_job_timeout_s), quarantine.hold(alone=suspect):
            return await _attempt(ctx, project_id, document_id, version)
    except TimeoutError:  # our limit (not an inner TimeoutError: _attempt handles those itself)
        reason = f"indexing took longer than {settings.index_job_timeout_s:g} s and was stopped"
        log.error("index job %s: %s", ids["job_id"], reason)
        await _fail(pool, project_id=project_id, document_id=document_id, version=version, reason=reason)
        return {"status": "failed", "error": reason}
    except asyncio.CancelledError:  # the worker is stopping: arq reruns the job; this is no death
        await asyncio.shield(_requeue(pool, ids))
        raise


async def _attempt(ctx: dict[str, Any], project_id: str, document_id: str, version: int) -> dict[str, Any]:
    pool = ctx["pool"]
    settings: Settings = ctx["settings"]
    job_id = index_job_id(document_id, version)
    ids = {"project_id": project_id, "job_id": job_id}
    try:
        async with pool.connection() as conn:
            deaths = await jobs.start_job(conn, **ids)
            if deaths:
                log.warning("index job %s: its worker died %d time(s) under it", job_id, deaths)
            if deaths is not None and deaths >= settings.job_max_deaths:
                raise JobAbandoned(jobs.WORKER_DIED)
            row = await document_index.version_to_index(
                conn, project_id=project_id, document_id=document_id, version=version
            )
            if row is None:
                raise JobAbandoned("the document was deleted before it could be indexed")
            if row.latest_version != version:
                raise JobAbandoned(f"superseded by version {row.latest_version}")
            await document_index.mark_processing(
                conn, project_id=project_id, document_id=document_id, version=version
            )
        return await _index(ctx, row, project_id=project_id, document_id=document_id, version=version)
    except (ParseError, JobAbandoned) as error:
        await _fail(pool, project_id=project_id, document_id=document_id, version=version, reason=str(error))
        return {"status": "failed", "error": str(error)}
    except TRANSIENT_ERRORS as error:
        if ctx.get("job_try", 1) < settings.job_max_tries:
            log.warning("transient error on %s, retrying: %r", job_id, error)
            await _requeue(pool, ids)  # a retry, not a death
            raise Retry(defer=ctx.get("job_try", 1) * 2) from error
        await _fail(
            pool,
            project_id=project_id,
            document_id=document_id,
            version=version,
            reason="indexing failed repeatedly because a service was unavailable; try again later",
        )
        return {"status": "failed", "error": repr(error)}
    except Exception as error:  # a bug or a file that breaks a parser: fail this job, keep the worker
        log.exception("index job %s failed", job_id)
        await _fail(
            pool,
            project_id=project_id,
            document_id=document_id,
            version=version,
            reason=f"the file could not be processed ({type(error).__name__})",
        )
        return {"status": "failed", "error": repr(error)}


async def _index(
    ctx: dict[str, Any], row: VersionToIndex, *, project_id: str, document_id: str, version: int
) -> dict[str, Any]:
    pool, settings = ctx["pool"], ctx["settings"]
    job_id = index_job_id(document_id, version)
    config = ChunkingConfig(
        max_chars=settings.chunk_max_chars,
        overlap_chars=settings.chunk_overlap_chars,
        min_chars=settings.chunk_min_chars,
    )
    # PDFs in a child process held to PDF_MAX_PAGES, PARSE_MAX_CHARS, PARSE_TIMEOUT_S and
    # PARSE_MAX_MEMORY_MB; a bound passed is a ParseError (failed, with the reason), and the worker lives.
    parsed: ParsedDocument = await parse_bounded(
        bytes(row.content),
        source_type=row.source_type,
        filename=row.filename,
        title=row.title,
        limits=ParseLimits.from_settings(settings),
    )
    async with pool.connection() as conn:
        await jobs.set_progress(conn, project_id=project_id, job_id=job_id, stage="chunking")
    drafts: list[ChunkDraft] = await asyncio.to_thread(chunk_document, parsed, config)
    if not drafts:
        raise ParseError("The document has no text to index.")
    language = resolve_language(row.project_language, parsed.text)

    async with pool.connection() as conn:
        known = await chunk_store.stored_embeddings(
            conn, project_id=project_id, document_id=document_id, embedding_model=settings.embedding_model
        )

    async def progress(done: int, total: int) -> None:
        async with pool.connection() as conn:
            await jobs.set_progress(
                conn, project_id=project_id, job_id=job_id, stage="embedding", done=done, total=total
            )

    texts_by_hash = {draft.content_hash: draft.embed_text for draft in drafts}
    vectors, embedded = await embed_missing(
        ctx["embeddings"], texts_by_hash, known, batch_size=settings.embedding_batch_size, progress=progress
    )
    rows = [
        chunk_store.ChunkRow(
            ordinal=draft.ordinal,
            text=draft.text,
            context_header=draft.context_header,
            section_path=draft.section_path,
            page_start=draft.page_start,
            page_end=draft.page_end,
            char_start=draft.char_start,
            char_end=draft.char_end,
            content_hash=draft.content_hash,
            embedding=vectors[draft.content_hash],
        )
        for draft in drafts
    ]
    async with pool.connection() as conn:
        await jobs.set_progress(
            conn, project_id=project_id, job_id=job_id, stage="writing", done=len(rows), total=len(rows)
        )
        async with conn.transaction():
            reason = await document_index.lock_for_version(
                conn, project_id=project_id, document_id=document_id, version=version
            )
            if reason:
                raise JobAbandoned(reason)
            # Chunk ids change: study items follow their text to the new chunks, or are flagged.
            sources = await item_sources.snapshot_sources(
                conn, project_id=project_id, document_id=document_id
            )
            await chunk_store.replace_chunks(
                conn,
                project_id=project_id,
                document_id=document_id,
                version=version,
                chunks=rows,
                embedding_model=settings.embedding_model,
                ts_config=TS_CONFIG[language],
            )
            carried = await item_sources.carry_sources(
                conn, project_id=project_id, document_id=document_id, before=sources
            )
            await document_index.mark_ready(
                conn,
                project_id=project_id,
                document_id=document_id,
                version=version,
                language=language,
                warnings=parsed.warnings,
                page_count=parsed.page_count,
            )
            await jobs.finish_job(
                conn, project_id=project_id, job_id=job_id, chunks_total=len(rows), chunks_embedded=embedded
            )
    log.info(
        "indexed %s: %d chunks, %d embedded; %d study items carried over, %d flagged source_changed",
        job_id, len(rows), embedded, carried.items, carried.flagged,
    )  # fmt: skip
    return {"status": "succeeded", "chunks": len(rows), "embedded": embedded}


async def _requeue(pool: Any, ids: dict[str, str]) -> None:
    try:
        async with pool.connection() as conn:
            await jobs.requeue_job(conn, **ids)
    except Exception as error:  # the database is what failed: the next start counts a death, at worst
        log.warning("could not mark %s queued again: %r", ids["job_id"], error)


async def _fail(pool: Any, *, project_id: str, document_id: str, version: int, reason: str) -> None:
    async with pool.connection() as conn, conn.transaction():
        await jobs.fail_job(
            conn, project_id=project_id, job_id=index_job_id(document_id, version), error=reason
        )
        await document_index.mark_failed(
            conn, project_id=project_id, document_id=document_id, version=version, error=reason
        )

"""The index job: parse, chunk, embed and store one version of a document, tracked by its jobs row."""

import asyncio
import logging
from dataclasses import fields
from typing import Any

from psycopg import AsyncConnection

from core.jobs.specs import INDEX_DOCUMENT, IndexDocument
from core.runtime import Runtime
from core.runtime.disk import DISK_FULL_REASON, check_space, index_bytes, is_disk_full
from core.settings import Settings
from core.store.content import chunks as chunk_store
from core.store.content import document_index
from core.store.content.document_index import VersionToIndex
from core.store.runs import jobs
from core.store.study import item_sources
from core.text.language import TS_CONFIG, resolve_language
from workers.chunking.sections import ChunkDraft, ChunkingConfig, chunk_document
from workers.jobs.embedding import embed_missing
from workers.jobs.framework import Failure, JobAbandoned, Result, TrackedJob
from workers.parsing.bounded import parse_bounded
from workers.parsing.types import ParsedDocument, ParseError

log = logging.getLogger(__name__)


class IndexJob(TrackedJob[IndexDocument]):
    spec = INDEX_DOCUMENT
    transient_reason = "indexing failed repeatedly because a service was unavailable; try again later"
    timeout_reason = "indexing took longer than {limit_s:g} s and was stopped"
    died_reason = jobs.WORKER_DIED

    def time_limit_s(self, settings: Settings) -> float:
        return settings.workers.index_job_timeout_s

    async def start(self, conn: AsyncConnection[Any], args: IndexDocument) -> int:
        deaths = await jobs.start_job(conn, project_id=args.project_id, job_id=self.spec.job_id(args))
        return deaths or 0  # None: no jobs row, the document is indexed all the same

    def known_failure(self, error: Exception) -> Failure | None:
        if isinstance(error, ParseError):
            return Failure(str(error))
        if is_disk_full(error):  # the chunks' transaction rolled back: nothing of this version is visible
            log.error("disk full while indexing: %r", error)
            return Failure(DISK_FULL_REASON, repr(error))
        return None

    def unforeseen_failure(self, error: Exception) -> Failure:  # a bug or a file that breaks a parser
        return Failure(f"the file could not be processed ({type(error).__name__})", repr(error))

    async def record_failure(self, conn: AsyncConnection[Any], args: IndexDocument, reason: str) -> None:
        await super().record_failure(conn, args, reason)
        await document_index.mark_failed(
            conn, project_id=args.project_id, document_id=args.document_id, version=args.version, error=reason
        )

    async def run(self, runtime: Runtime, args: IndexDocument) -> Result:
        project_id, document_id, version = args.project_id, args.document_id, args.version
        async with runtime.pool.connection() as conn:
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
        return await _index(runtime, row, args)


# One attempt within INDEX_JOB_TIMEOUT_S, in the jobs row's lifecycle (workers/jobs/framework.py).
index_document = IndexJob()


async def _index(runtime: Runtime, row: VersionToIndex, args: IndexDocument) -> Result:
    pool, settings = runtime.pool, runtime.settings
    project_id, document_id, version = args.project_id, args.document_id, args.version
    job_id = INDEX_DOCUMENT.job_id(args)
    config = ChunkingConfig(
        max_chars=settings.chunking.max_chars,
        overlap_chars=settings.chunking.overlap_chars,
        min_chars=settings.chunking.min_chars,
    )
    # PDFs in a child process held to PDF_MAX_PAGES, PARSE_MAX_CHARS, PARSE_TIMEOUT_S and
    # PARSE_MAX_MEMORY_MB; a bound passed is a ParseError (failed, with the reason), and the worker lives.
    parsed: ParsedDocument = await parse_bounded(
        bytes(row.content),
        source_type=row.source_type,
        filename=row.filename,
        title=row.title,
        limits=settings.parsing,
    )
    async with pool.connection() as conn:
        await jobs.set_progress(conn, project_id=project_id, job_id=job_id, stage="chunking")
    drafts: list[ChunkDraft] = await asyncio.to_thread(chunk_document, parsed, config)
    if not drafts:
        raise ParseError("The document has no text to index.")
    language = resolve_language(row.project_language, parsed.text)

    async with pool.connection() as conn:
        known = await chunk_store.stored_embeddings(
            conn, project_id=project_id, document_id=document_id, embedding_model=settings.embeddings.model
        )

    async def progress(done: int, total: int) -> None:
        async with pool.connection() as conn:
            await jobs.set_progress(
                conn, project_id=project_id, job_id=job_id, stage="embedding", done=done, total=total
            )

    texts_by_hash = {draft.content_hash: draft.embed_text for draft in drafts}
    vectors, embedded = await embed_missing(
        runtime.embeddings, texts_by_hash, known, batch_size=settings.embeddings.batch_size, progress=progress
    )
    # A stored row is its draft, field for field, plus the vector.
    rows = [
        chunk_store.ChunkRow(
            **{f.name: getattr(draft, f.name) for f in fields(draft)}, embedding=vectors[draft.content_hash]
        )
        for draft in drafts
    ]
    # Refused here rather than by Postgres: a WAL segment it cannot create stops the whole server.
    check_space(settings, index_bytes([draft.text for draft in drafts]))
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
                embedding_model=settings.embeddings.model,
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

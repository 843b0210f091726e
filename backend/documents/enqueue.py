"""Hands an indexing job to the queue (its spec, core/jobs/specs.py: never the worker's code).

Takes the pool, not a connection: the caller has given its connection back before talking to Redis,
and one is borrowed again only to mark the job failed when the queue is down."""

import logging

from arq.connections import ArqRedis
from psycopg_pool import AsyncConnectionPool

from backend.documents.schemas import DocumentAccepted
from core.errors import Unavailable
from core.jobs.specs import INDEX_DOCUMENT, IndexDocument, enqueue
from core.store.content import document_index
from core.store.content.documents import Document
from core.store.runs import jobs

log = logging.getLogger(__name__)


async def enqueue_index(db: AsyncConnectionPool, queue: ArqRedis, document: Document) -> DocumentAccepted:
    project_id, document_id, version = document.project_id, document.id, document.version
    args = IndexDocument(project_id, document_id, version)
    job_id = INDEX_DOCUMENT.job_id(args)
    try:
        await enqueue(queue, INDEX_DOCUMENT, args)
    except Exception as error:  # Redis down: say so, and leave no job that looks like it will run
        log.error("could not enqueue %s: %r", job_id, error)
        reason = "The job queue is unavailable, so indexing could not start; try again later."
        async with db.connection() as conn, conn.transaction():
            await jobs.fail_job(conn, project_id=project_id, job_id=job_id, error=reason)
            await document_index.mark_failed(
                conn, project_id=project_id, document_id=document_id, version=version, error=reason
            )
        raise Unavailable(reason) from error
    return DocumentAccepted(document_id=document_id, job_id=job_id, version=version, status=document.status)

"""What the document routes do once the request is parsed and the caller's role checked: store a new
document or version within the upload budgets and queue its indexing, delete one with its security
event, index one again. No HTTP here: refusals are core/errors.py's kinds."""

import contextlib
from uuid import UUID

from arq.connections import ArqRedis
from arq.constants import result_key_prefix
from psycopg_pool import AsyncConnectionPool
from redis.exceptions import RedisError

from backend.deps import ProjectAccess
from backend.documents.enqueue import enqueue_index
from backend.documents.schemas import DocumentAccepted
from backend.documents.upload_budget import check_upload_budget
from backend.documents.uploads import CheckedUpload
from backend.web.project_log import record_project_event
from core.errors import NotAllowed, NotFound, Refusal
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.content import documents
from core.store.content.documents import Document
from core.store.runs.jobs import index_job_id
from core.store.sql.access import ProjectScope

VIEWER = Text("project.viewers_cannot_change")


def not_found() -> NotFound:
    return NotFound(Text("document.not_found"))


async def store_upload(
    db: AsyncConnectionPool,
    queue: ArqRedis,
    settings: Settings,
    scope: ProjectScope,
    upload: CheckedUpload,
    *,
    title: str | None,
    current: Document | None = None,
) -> DocumentAccepted:
    """A new uploaded document, or `current`'s next version (the current one stays searchable until the
    new one is indexed), queued for indexing; refused past an upload budget."""
    await check_upload_budget(db, settings, scope, incoming_bytes=len(upload.content))
    async with db.connection() as conn:
        if current is None:
            document = await documents.create_document(
                conn, **scope, title=title or upload.default_title, filename=upload.filename,
                source_type=upload.source_type, kind="uploaded", content=upload.content,
                content_hash=upload.content_hash,
            )  # fmt: skip
        else:
            document = await documents.add_version(
                conn, **scope, document_id=current.id, content=upload.content,
                content_hash=upload.content_hash, filename=upload.filename, source_type=upload.source_type,
                title=title or current.title,
            )  # fmt: skip
    return await _index(db, queue, document, NotAllowed(VIEWER) if current is None else not_found())


async def _index(
    db: AsyncConnectionPool, queue: ArqRedis, document: Document | None, refusal: Refusal
) -> DocumentAccepted:
    """The stored document's indexing job queued, or `refusal` when the store wrote nothing (the
    membership or role check in its SQL failed)."""
    if document is None:
        raise refusal
    return await enqueue_index(db, queue, document)


async def delete_document(
    db: AsyncConnectionPool, audit: Audit, access: ProjectAccess, document_id: UUID
) -> None:
    """The document, its versions and chunks gone, and the event logged in the same transaction."""
    async with db.connection() as conn, conn.transaction():
        deleted = await documents.delete_document(conn, **access.scope, document_id=document_id)
        if deleted is None:
            raise not_found()
        details = {"title": deleted.title[:200], "filename": deleted.filename[:200]}
        await record_project_event(
            conn, audit, access, "document.deleted", target_id=document_id, details=details
        )


async def reindex(
    db: AsyncConnectionPool, queue: ArqRedis, scope: ProjectScope, document_id: UUID
) -> DocumentAccepted:
    """The latest version indexed again under the same job id; a job still queued or running is left
    to finish."""
    async with db.connection() as conn, conn.transaction():
        document = await documents.queue_reindex(conn, **scope, document_id=document_id)
    if document is None:
        raise not_found()
    # arq keeps a finished job's result for an hour and refuses to enqueue that job id meanwhile.
    # Redis down: enqueue_index below says so (503) and marks the job failed.
    with contextlib.suppress(RedisError):
        await queue.delete(result_key_prefix + index_job_id(document.id, document.version))
    return await enqueue_index(db, queue, document)

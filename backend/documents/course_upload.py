"""Storing a course's files as documents of one batch and queueing their indexing."""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from uuid import UUID

from arq.connections import ArqRedis
from psycopg_pool import AsyncConnectionPool

from backend.documents.batch_schemas import BatchFileAccepted, BatchFileRefused
from backend.documents.course_files import CourseFile, Refused
from backend.documents.enqueue import enqueue_index
from backend.documents.uploads import bounded_filename, check_content
from core.errors import NotAllowed, Refusal
from core.store.content import batches, documents
from core.store.sql.access import ProjectScope


@dataclass
class BatchOutcome:
    accepted: list[BatchFileAccepted] = field(default_factory=list)
    refused: list[BatchFileRefused] = field(default_factory=list)


async def store_course_files(
    db: AsyncConnectionPool,
    queue: ArqRedis,
    scope: ProjectScope,
    batch_id: UUID,
    files: AsyncIterator[CourseFile | Refused],
) -> BatchOutcome:
    """Each file a document of the batch (its path, less the extension, as the title), or a refusal with
    the reason its type was refused; the refusals are kept with the batch."""
    outcome = BatchOutcome()
    async for item in files:
        if isinstance(item, Refused):
            outcome.refused.append(BatchFileRefused(path=item.path, reason=item.reason))
            continue
        try:
            upload = check_content(item.content, bounded_filename(PurePosixPath(item.path).name))
        except Refusal as error:
            outcome.refused.append(BatchFileRefused(path=item.path, reason=str(error)))
            continue
        title = str(PurePosixPath(item.path).with_suffix("")) or item.path
        async with db.connection() as conn:
            document = await documents.create_document(
                conn, **scope, title=title[:300], filename=upload.filename, source_type=upload.source_type,
                kind="uploaded", content=upload.content, content_hash=upload.content_hash, batch_id=batch_id,
            )  # fmt: skip
        if document is None:
            raise NotAllowed("Viewers cannot change this project.")
        accepted = await enqueue_index(db, queue, document)
        outcome.accepted.append(BatchFileAccepted(**accepted.model_dump(), path=item.path))
    if outcome.refused:
        async with db.connection() as conn:
            refused = [item.model_dump() for item in outcome.refused]
            await batches.add_rejected(conn, **scope, batch_id=batch_id, rejected=refused)
    return outcome

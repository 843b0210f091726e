"""A course put in at once: a folder's files or a course ZIP as one batch of documents, and its progress."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, HTTPException, Query, Request, status
from starlette.datastructures import UploadFile

from backend.deps import DbDep, ProjectDep, ProjectWriterDep, QueueDep, SettingsDep
from backend.documents.batch_schemas import BatchAccepted, BatchDocumentOut, BatchFileRefused, BatchProgress
from backend.documents.course_files import (
    CourseFile,
    Refused,
    clean_path,
    is_course_zip,
    zip_members,
)
from backend.documents.course_upload import store_course_files
from backend.documents.upload_budget import check_upload_budget
from core.messages import Text
from core.settings.limits import LimitSettings
from core.store.content import batches

router = APIRouter(prefix="/projects/{project_id}/documents", tags=["documents"])
_READ_SIZE = 1024 * 1024
_HEAD_BYTES = 8


def _batch_not_found() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, Text("batch.not_found"))


@router.post(
    "/batch",
    status_code=status.HTTP_202_ACCEPTED,
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "files": {"type": "array", "items": {"type": "string", "format": "binary"}}
                        },
                        "required": ["files"],
                    }
                }
            }
        }
    },
)
async def upload_batch(
    request: Request,
    access: ProjectWriterDep,
    db: DbDep,
    queue: QueueDep,
    settings: SettingsDep,
    batch_id: Annotated[UUID | None, Query(description="add these files to an earlier batch")] = None,
) -> BatchAccepted:
    """Multipart `files`, each named by its path in the course folder (a browser's webkitRelativePath),
    any of them a course ZIP whose members are taken the same way. Every supported file becomes a
    document of the batch; the others are listed with the reason. A large folder is sent in several
    requests with the first answer's `batch_id`. The request is held to COURSE_UPLOAD_MAX_BYTES."""
    limits = settings.limits
    form = await request.form(max_files=limits.course_upload_max_files, max_fields=2)
    uploads = [item for item in form.getlist("files") if isinstance(item, UploadFile)]
    if not uploads:
        raise HTTPException(422, Text("batch.files_field"))
    incoming = sum(upload.size or 0 for upload in uploads)
    await check_upload_budget(db, settings, access.scope, incoming_bytes=incoming, files=len(uploads))
    async with db.connection() as conn:
        if batch_id is None:
            batch_id = await batches.create_batch(conn, **access.scope)
        elif await batches.get_batch(conn, **access.scope, batch_id=batch_id) is None:
            raise _batch_not_found()
    if batch_id is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, Text("project.viewers_cannot_change"))
    items = _in_thread(_course_files(uploads, limits))
    outcome = await store_course_files(db, queue, access.scope, batch_id, items)
    return BatchAccepted(batch_id=batch_id, accepted=outcome.accepted, refused=outcome.refused)


@router.get("/batches/{batch_id}")
async def get_batch_progress(batch_id: UUID, access: ProjectDep, db: DbDep) -> BatchProgress:
    async with db.connection() as conn:
        batch = await batches.get_batch(conn, **access.scope, batch_id=batch_id)
        if batch is None:
            raise _batch_not_found()
        rows = await batches.batch_documents(conn, **access.scope, batch_id=batch_id)
    counts = {
        state: sum(row.status == state for row in rows)
        for state in ("queued", "processing", "ready", "failed")
    }
    return BatchProgress(
        batch_id=batch.id,
        created_at=batch.created_at,
        total=len(rows),
        **counts,
        done=counts["queued"] + counts["processing"] == 0,
        documents=[BatchDocumentOut.model_validate(row) for row in rows],
        refused=[BatchFileRefused.model_validate(item) for item in batch.rejected],
    )


def _course_files(uploads: list[UploadFile], limits: LimitSettings) -> Iterator[CourseFile | Refused]:
    """Blocking reads (spooled temp files, inflating): pulled one item at a time from a thread."""
    for upload in uploads:
        path = clean_path(upload.filename or "upload")
        if path is None:  # a hidden or system file of the folder (.DS_Store, .git/...): not course material
            continue
        head = upload.file.read(_HEAD_BYTES)
        upload.file.seek(0)
        if is_course_zip(head, upload.file):
            yield from zip_members(upload.file, path, limits)
            continue
        content = upload.file.read(limits.max_upload_bytes + 1)
        if len(content) > limits.max_upload_bytes:
            yield Refused(
                path, f"the file is larger than the limit of {limits.max_upload_bytes // 1024**2} MB"
            )
        else:
            yield CourseFile(path, content)


async def _in_thread(items: Iterator[CourseFile | Refused]) -> AsyncIterator[CourseFile | Refused]:
    while (item := await asyncio.to_thread(next, items, None)) is not None:
        yield item

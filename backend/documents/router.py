"""Uploading, editing, listing and deleting a project's documents; indexing runs in the worker."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, Form, HTTPException, Request, Response, UploadFile, status
from psycopg_pool import AsyncConnectionPool
from pydantic import ValidationError
from starlette.datastructures import UploadFile as StarletteUploadFile

from backend.deps import DbDep, ProjectDep, ProjectWriterDep, QueueDep, SettingsDep
from backend.documents import service
from backend.documents.schemas import ChunkOut, DocumentAccepted, DocumentOut, DocumentTextUpdate
from backend.documents.uploads import CheckedUpload, check_content, read_upload
from backend.web.audit import AuditDep
from backend.web.paging import Page, paging
from core.messages import Text
from core.store.content import chunks, documents

router = APIRouter(prefix="/projects/{project_id}/documents", tags=["documents"])

# Documents and their chunks are listed in long pages: a course has hundreds of either.
DocumentPage = Annotated[Page, Depends(paging(default=100, most=1000))]


@router.post("", status_code=status.HTTP_202_ACCEPTED)
async def upload_document(
    file: UploadFile,
    access: ProjectWriterDep,
    db: DbDep,
    queue: QueueDep,
    settings: SettingsDep,
    title: Annotated[str | None, Form(max_length=300)] = None,
) -> DocumentAccepted:
    """Multipart upload of one file of an accepted type (core/text/filetypes.py); answers at once with
    the indexing job. A body over MAX_UPLOAD_BYTES was refused before this runs
    (backend/middleware/body_limit.py); one past an upload budget is refused here (429 or 413)."""
    upload = await read_upload(file, settings.limits.max_upload_bytes)
    return await service.store_upload(db, queue, settings, access.scope, upload, title=title)


@router.get("")
async def list_documents(access: ProjectDep, db: DbDep, page: DocumentPage) -> list[DocumentOut]:
    """The project's documents, oldest first, a page at a time."""
    async with db.connection() as conn:
        rows = await documents.list_documents(conn, **access.scope, page=page)
    return [DocumentOut.model_validate(row) for row in rows]


@router.get("/{document_id}")
async def get_document(document_id: UUID, access: ProjectDep, db: DbDep) -> DocumentOut:
    async with db.connection() as conn:
        row = await documents.get_document(conn, **access.scope, document_id=document_id)
    if row is None:
        raise service.not_found()
    return DocumentOut.model_validate(row)


@router.patch(
    "/{document_id}",
    status_code=status.HTTP_202_ACCEPTED,
    openapi_extra={
        "requestBody": {
            "content": {
                "application/json": {"schema": DocumentTextUpdate.model_json_schema()},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "title": {"type": "string"},
                        },
                    }
                },
            }
        }
    },
)
async def update_document(
    document_id: UUID,
    request: Request,
    access: ProjectWriterDep,
    db: DbDep,
    queue: QueueDep,
    settings: SettingsDep,
) -> DocumentAccepted:
    """New content as JSON `{content, title?}` (Markdown/text) or as a multipart `file`; reindexes.
    The current version stays searchable until the new one is ready. Either body is held to
    MAX_UPLOAD_BYTES (plus a little for the JSON or multipart around it) before this runs."""
    async with db.connection() as conn:
        current = await documents.get_document(conn, **access.scope, document_id=document_id)
    if current is None:
        raise service.not_found()
    # No connection is held while the body arrives: a slow client must not keep one from others.
    upload, title = await _new_content(request, current, db, access, settings.limits.max_upload_bytes)
    return await service.store_upload(db, queue, settings, access.scope, upload, title=title, current=current)


async def _new_content(
    request: Request,
    current: documents.Document,
    db: AsyncConnectionPool,
    access: ProjectWriterDep,
    limit: int,
) -> tuple[CheckedUpload, str | None]:
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_fields=1)  # `file` and `title`, nothing else
        file, title = form.get("file"), form.get("title")
        if not isinstance(file, StarletteUploadFile):
            raise HTTPException(422, Text("document.version_file_field"))
        return await read_upload(file, limit), title if isinstance(title, str) else None
    try:
        body = DocumentTextUpdate.model_validate_json(await request.body())
    except ValidationError as error:
        raise HTTPException(422, error.errors(include_url=False, include_context=False)) from error
    if body.content is None:
        if body.title is None:
            raise HTTPException(422, Text("document.nothing_to_change"))
        async with db.connection() as conn:
            content = await documents.latest_content(conn, **access.scope, document_id=current.id)
        if content is None:
            raise service.not_found()
        return check_content(content, current.filename), body.title
    if current.source_type not in ("markdown", "text"):
        raise HTTPException(415, Text("document.not_text"))
    if len(body.content.encode()) > limit:
        raise HTTPException(413, Text("document.content_too_large"))
    return check_content(body.content.encode(), current.filename), body.title


@router.delete("/{document_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_document(
    document_id: UUID, audit: AuditDep, access: ProjectWriterDep, db: DbDep
) -> Response:
    await service.delete_document(db, audit, access, document_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{document_id}/reindex", status_code=status.HTTP_202_ACCEPTED)
async def reindex_document(
    document_id: UUID, access: ProjectWriterDep, db: DbDep, queue: QueueDep
) -> DocumentAccepted:
    """Indexes the latest version again, e.g. to retry a failed document; answers at once with the job
    (the same job id as before). A job still queued or running is left to finish."""
    return await service.reindex(db, queue, access.scope, document_id)


@router.get("/{document_id}/chunks")
async def list_chunks(document_id: UUID, access: ProjectDep, db: DbDep, page: DocumentPage) -> list[ChunkOut]:
    async with db.connection() as conn:
        if await documents.get_document(conn, **access.scope, document_id=document_id) is None:
            raise service.not_found()
        rows = await chunks.list_chunks(conn, **access.scope, document_id=document_id, page=page)
    return [ChunkOut.model_validate(row) for row in rows]

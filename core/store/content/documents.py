"""Documents and their stored versions. API reads/writes are scoped by membership in SQL."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.store.runs.jobs import index_job_id, reset_for_reindex
from core.store.sql.access import Connection, in_project, scope, writer_of
from core.store.sql.listing import Page, page_or_all
from core.store.sql.rows import columns, fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class Document:
    id: UUID
    project_id: UUID
    title: str
    filename: str
    source_type: str
    kind: str
    language: str
    version: int  # the latest submitted content
    indexed_version: int | None  # the version whose chunks are live
    status: str  # of the latest version
    error: str | None
    warnings: list[str]
    page_count: int | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime


_COLUMNS = columns(
    Document,
    prefix="d.",
    computed={
        "chunk_count": "(SELECT count(*) FROM chunks c WHERE c.document_id = d.id"
        " AND c.project_id = d.project_id)"
    },
)


@dataclass(frozen=True, slots=True)
class DeletedDocument:
    title: str
    filename: str


@dataclass(frozen=True, slots=True)
class _Version:
    id: UUID
    version: int


async def create_document(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    title: str,
    filename: str,
    source_type: str,
    kind: str,
    content: bytes,
    content_hash: str,
    batch_id: UUID | None = None,
) -> Document | None:
    """Document row, its first version's bytes and its index job, in one transaction.
    Returns None when the caller may not write to the project."""
    params = scope(
        project_id,
        user_id,
        title=title,
        filename=filename,
        source_type=source_type,
        kind=kind,
        batch_id=batch_id,
    )
    async with conn.transaction():
        document_id: UUID | None = await fetch_one(
            conn,
            scalar_row,
            "INSERT INTO documents"
            " (project_id, title, filename, source_type, kind, language, created_by, batch_id)"
            " SELECT p.id, %(title)s, %(filename)s, %(source_type)s, %(kind)s, p.language, %(user_id)s,"
            " %(batch_id)s"
            f" FROM projects p WHERE p.id = %(project_id)s AND {writer_of('p.id')}"
            " RETURNING id",
            params,
        )
        if document_id is None:
            return None
        await _add_version(
            conn,
            project_id=project_id,
            document_id=document_id,
            version=1,
            user_id=user_id,
            content=content,
            content_hash=content_hash,
            filename=filename,
        )
    return await get_document(conn, project_id=project_id, user_id=user_id, document_id=document_id)


async def add_version(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    document_id: UUID,
    content: bytes,
    content_hash: str,
    filename: str,
    source_type: str,
    title: str,
) -> Document | None:
    """A new version to index; the live chunks stay until its job replaces them."""
    async with conn.transaction():
        version: int | None = await fetch_one(
            conn,
            scalar_row,
            "UPDATE documents d SET version = d.version + 1, status = 'queued', error = NULL,"
            " filename = %(filename)s, source_type = %(source_type)s, title = %(title)s, updated_at = now()"
            f" WHERE d.id = %(document_id)s AND d.project_id = %(project_id)s AND {writer_of('d.project_id')}"
            " RETURNING d.version",
            {
                "project_id": project_id,
                "user_id": user_id,
                "document_id": document_id,
                "filename": filename,
                "source_type": source_type,
                "title": title,
            },
        )
        if version is None:
            return None
        await _add_version(
            conn,
            project_id=project_id,
            document_id=document_id,
            version=version,
            user_id=user_id,
            content=content,
            content_hash=content_hash,
            filename=filename,
        )
    return await get_document(conn, project_id=project_id, user_id=user_id, document_id=document_id)


async def _add_version(
    conn: Connection,
    *,
    project_id: UUID,
    document_id: UUID,
    version: int,
    user_id: UUID,
    content: bytes,
    content_hash: str,
    filename: str,
) -> None:
    await conn.execute(
        "INSERT INTO document_versions"
        " (project_id, document_id, version, content, content_hash, size_bytes, filename, created_by)"
        " VALUES (%(project_id)s, %(document_id)s, %(version)s, %(content)s, %(content_hash)s,"
        " %(size)s, %(filename)s, %(user_id)s)",
        {
            "project_id": project_id,
            "user_id": user_id,
            "document_id": document_id,
            "version": version,
            "content": content,
            "content_hash": content_hash,
            "size": len(content),
            "filename": filename,
        },
    )
    await conn.execute(
        "INSERT INTO jobs (id, project_id, document_id, document_version, kind)"
        " VALUES (%(id)s, %(project_id)s, %(document_id)s, %(version)s, 'index')",
        {
            "id": index_job_id(document_id, version),
            "project_id": project_id,
            "document_id": document_id,
            "version": version,
        },
    )


async def list_documents(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    page: Page | None = None,
) -> list[Document]:
    """Oldest first; `page` None: all of them (the QA agent's document list, not an API page)."""
    return await fetch_all(
        conn,
        class_row(Document),
        f"SELECT {_COLUMNS} FROM documents d"
        f" WHERE {in_project('d')} ORDER BY d.created_at, d.id"
        " LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page_or_all(page)),
    )


async def get_document(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> Document | None:
    query = f"SELECT {_COLUMNS} FROM documents d WHERE d.id = %(document_id)s AND {in_project('d')}"
    return await fetch_one(
        conn, class_row(Document), query, scope(project_id, user_id, document_id=document_id)
    )


async def delete_document(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> DeletedDocument | None:
    """Chunks and versions go with the row (ON DELETE CASCADE), in this one statement's transaction.
    The deleted document's title and filename (for the security log), or None when nothing was deleted."""
    return await fetch_one(
        conn,
        class_row(DeletedDocument),
        f"DELETE FROM documents d WHERE d.id = %(document_id)s AND d.project_id = %(project_id)s"
        f" AND {writer_of('d.project_id')} RETURNING d.title, d.filename",
        scope(project_id, user_id, document_id=document_id),
    )


async def latest_content(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> bytes | None:
    content: bytes | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT v.content FROM document_versions v JOIN documents d"
        " ON d.id = v.document_id AND d.project_id = v.project_id AND d.version = v.version"
        f" WHERE d.id = %(document_id)s AND {in_project('d')}",
        scope(project_id, user_id, document_id=document_id),
    )
    return None if content is None else bytes(content)


async def queue_reindex(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID
) -> Document | None:
    """POST .../reindex: the latest version's index job, if it finished (failed or succeeded), is
    queued again with a fresh allowance of worker deaths, and the document shows `queued`; the chunks
    of `indexed_version` stay live meanwhile. A job still queued or running is left as it is. Call in
    a transaction. None when there is no such document or the caller may not write to the project."""
    row = await fetch_one(
        conn,
        class_row(_Version),
        "SELECT d.id, d.version FROM documents d WHERE d.id = %(document_id)s"
        f" AND d.project_id = %(project_id)s AND {writer_of('d.project_id')} FOR UPDATE",
        scope(project_id, user_id, document_id=document_id),
    )
    if row is None:
        return None
    job_id = index_job_id(row.id, row.version)
    if await reset_for_reindex(conn, project_id=project_id, job_id=job_id):
        await conn.execute(
            "UPDATE documents SET status = 'queued', error = NULL, updated_at = now()"
            " WHERE id = %(document_id)s AND project_id = %(project_id)s",
            {"project_id": project_id, "document_id": document_id},
        )
    return await get_document(conn, project_id=project_id, user_id=user_id, document_id=document_id)

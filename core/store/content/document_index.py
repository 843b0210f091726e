"""The worker's side of the documents table: read a version to index, move its status along.

These run with the project and document taken from the job (set by the API), not from a user."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.store.sql.access import Connection
from core.store.sql.rows import fetch_one


@dataclass(frozen=True, slots=True)
class VersionToIndex:
    """One stored version of a document, with what the index job needs to parse and chunk it."""

    title: str
    source_type: str
    latest_version: int  # the document's newest version: an older one is superseded
    project_language: str
    content: bytes
    filename: str


async def version_to_index(
    conn: Connection, *, project_id: UUID, document_id: UUID, version: int
) -> VersionToIndex | None:
    return await fetch_one(
        conn,
        class_row(VersionToIndex),
        "SELECT d.title, d.source_type, d.version AS latest_version, p.language AS project_language,"
        " v.content, v.filename"
        " FROM documents d JOIN projects p ON p.id = d.project_id"
        " JOIN document_versions v ON v.document_id = d.id AND v.project_id = d.project_id"
        " AND v.version = %(version)s"
        " WHERE d.id = %(document_id)s AND d.project_id = %(project_id)s",
        {"project_id": project_id, "document_id": document_id, "version": version},
    )


async def mark_processing(conn: Connection, *, project_id: UUID, document_id: UUID, version: int) -> None:
    await conn.execute(
        "UPDATE documents SET status = 'processing', updated_at = now()"
        " WHERE id = %(document_id)s AND project_id = %(project_id)s AND version = %(version)s",
        {"project_id": project_id, "document_id": document_id, "version": version},
    )


async def lock_for_version(
    conn: Connection, *, project_id: UUID, document_id: UUID, version: int
) -> str | None:
    """Inside the replace transaction: lock the row; returns why the version must not be written."""
    latest: int | None = await fetch_one(
        conn,
        scalar_row,
        "SELECT version FROM documents WHERE id = %(document_id)s AND project_id = %(project_id)s FOR UPDATE",
        {"project_id": project_id, "document_id": document_id},
    )
    if latest is None:
        return "the document was deleted while it was being indexed"
    if latest != version:
        return f"superseded by version {latest}"
    return None


async def mark_ready(
    conn: Connection,
    *,
    project_id: UUID,
    document_id: UUID,
    version: int,
    language: str,
    warnings: list[str],
    page_count: int | None,
) -> None:
    await conn.execute(
        "UPDATE documents SET status = 'ready', indexed_version = %(version)s, error = NULL,"
        " language = %(language)s, warnings = %(warnings)s, page_count = %(page_count)s, updated_at = now()"
        " WHERE id = %(document_id)s AND project_id = %(project_id)s",
        {
            "project_id": project_id,
            "document_id": document_id,
            "version": version,
            "language": language,
            "warnings": warnings,
            "page_count": page_count,
        },
    )


async def mark_failed(
    conn: Connection, *, project_id: UUID, document_id: UUID, version: int, error: str
) -> None:
    """Only the latest version's failure shows on the document; its live chunks are left alone."""
    await conn.execute(
        "UPDATE documents SET status = 'failed', error = %(error)s, updated_at = now()"
        " WHERE id = %(document_id)s AND project_id = %(project_id)s AND version = %(version)s",
        {"project_id": project_id, "document_id": document_id, "version": version, "error": error},
    )

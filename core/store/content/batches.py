"""Upload batches: a course put in at once (a folder or a ZIP), and the progress of all its documents."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.rows import class_row, scalar_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, in_project, scope, writer_of
from core.store.sql.rows import fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class BatchDocument:
    id: UUID
    title: str
    filename: str
    source_type: str
    status: str
    error: str | None


@dataclass(frozen=True, slots=True)
class Batch:
    id: UUID
    created_at: datetime
    rejected: list[dict[str, Any]]


async def create_batch(conn: Connection, *, project_id: UUID, user_id: UUID) -> UUID | None:
    """None when the caller may not write to the project."""
    batch_id: UUID | None = await fetch_one(
        conn,
        scalar_row,
        "INSERT INTO upload_batches (project_id, created_by)"
        f" SELECT p.id, %(user_id)s FROM projects p WHERE p.id = %(project_id)s AND {writer_of('p.id')}"
        " RETURNING id",
        scope(project_id, user_id),
    )
    return batch_id


async def add_rejected(
    conn: Connection, *, project_id: UUID, user_id: UUID, batch_id: UUID, rejected: list[dict[str, str]]
) -> None:
    """Appends in SQL: two parts of one batch arriving together both keep their refusals."""
    await conn.execute(
        "UPDATE upload_batches b SET rejected = b.rejected || %(rejected)s"
        f" WHERE b.id = %(batch_id)s AND {in_project('b')}",
        scope(project_id, user_id, batch_id=batch_id, rejected=Jsonb(rejected)),
    )


async def get_batch(conn: Connection, *, project_id: UUID, user_id: UUID, batch_id: UUID) -> Batch | None:
    return await fetch_one(
        conn,
        class_row(Batch),
        "SELECT b.id, b.created_at, b.rejected FROM upload_batches b"
        f" WHERE b.id = %(batch_id)s AND {in_project('b')}",
        scope(project_id, user_id, batch_id=batch_id),
    )


async def batch_documents(
    conn: Connection, *, project_id: UUID, user_id: UUID, batch_id: UUID
) -> list[BatchDocument]:
    return await fetch_all(
        conn,
        class_row(BatchDocument),
        "SELECT d.id, d.title, d.filename, d.source_type, d.status, d.error FROM documents d"
        f" WHERE d.batch_id = %(batch_id)s AND {in_project('d')} ORDER BY d.created_at, d.title",
        scope(project_id, user_id, batch_id=batch_id),
    )

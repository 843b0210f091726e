"""A stored version of a document, read back for the viewer of a cited spot: its exact bytes, and the
text of its chunks around a cited character range while that version is the indexed one. Scoped by
membership in the SQL, like every read of a project's content."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection, in_project, scope
from core.store.sql.rows import columns, fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class StoredVersion:
    document_id: UUID
    version: int
    title: str  # the document's title now (titles are not kept per version)
    filename: str  # this version's own
    content: bytes
    content_hash: str
    created_at: datetime


_VERSION_COLUMNS = columns(StoredVersion, prefix="v.", computed={"title": "d.title"})


@dataclass(frozen=True, slots=True)
class VersionChunk:
    """A live chunk of the version: its text is the parsed text's slice [char_start, char_end)."""

    char_start: int
    char_end: int
    text: str
    page_start: int | None
    page_end: int | None


_CHUNK_COLUMNS = columns(VersionChunk, prefix="c.")


async def stored_version(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID, version: int
) -> StoredVersion | None:
    """None when there is no such version of a document of this project, or the caller is no member:
    the two are not told apart (404 alike)."""
    row = await fetch_one(
        conn,
        class_row(StoredVersion),
        f"SELECT {_VERSION_COLUMNS} FROM document_versions v"
        " JOIN documents d ON d.id = v.document_id AND d.project_id = v.project_id"
        f" WHERE v.document_id = %(document_id)s AND v.version = %(version)s AND {in_project('v')}",
        scope(project_id, user_id, document_id=document_id, version=version),
    )
    if row is None or isinstance(row.content, bytes):
        return row
    # psycopg reads bytea as a memoryview; the record promises bytes.
    return StoredVersion(
        document_id=row.document_id, version=row.version, title=row.title, filename=row.filename,
        content=bytes(row.content), content_hash=row.content_hash, created_at=row.created_at,
    )  # fmt: skip


async def chunks_in_range(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    document_id: UUID,
    version: int,
    char_start: int,
    char_end: int,
) -> list[VersionChunk]:
    """The live chunks of this version that overlap [char_start, char_end), in text order; none once a
    newer version's chunks replaced them (invariant 3)."""
    return await fetch_all(
        conn,
        class_row(VersionChunk),
        f"SELECT {_CHUNK_COLUMNS} FROM chunks c"
        " WHERE c.document_id = %(document_id)s AND c.document_version = %(version)s"
        " AND c.char_start < %(char_end)s AND c.char_end > %(char_start)s"
        f" AND {in_project('c')} ORDER BY c.char_start, c.ordinal",
        scope(
            project_id, user_id, document_id=document_id, version=version,
            char_start=char_start, char_end=char_end,
        ),
    )  # fmt: skip

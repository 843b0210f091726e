"""Free space on the disk that holds the embedded Postgres, and what a full disk is called.

A full disk is worse for Postgres than a failed write: an ordinary table that cannot grow fails its
statement (SQLSTATE 53100, DiskFull), but a WAL segment that cannot be created is a PANIC, and the crash
recovery that follows needs WAL space too, so the server stays down until space is freed. So the large
writes (an upload's bytes, a document's chunks) are refused while less than STORAGE_MIN_FREE_MB would be
left, which keeps that reserve for the small writes (history, job rows) and for the WAL. With an external
DATABASE_URL (and no embedded data directory left) the database's disk is not this machine's: no check,
only the errors are recognised; STORAGE_MIN_FREE_MB=0 turns the check off."""

import errno
import os
import shutil

import psycopg

from core.settings import Settings

MB = 1024 * 1024
DISK_FULL_REASON = (
    "The server ran out of disk space while indexing this file; ask the administrator to free space,"
    " then reindex."
)
UPLOAD_DISK_FULL = (
    "The server is out of disk space, so the file was not stored; ask the administrator to free space,"
    " then upload it again."
)
# Per stored chunk beyond its text: the vector (384 float4), the HNSW and full-text index entries, the
# row header, and the WAL that logs all of it (full-page images after a checkpoint double it).
CHUNK_OVERHEAD_BYTES = 6 * 1024
WRITE_AMPLIFICATION = 3  # text is written to the heap, its tsvector, and the WAL


class DiskSpaceLow(OSError):
    """A write refused before it was tried: it would leave less than the reserve free."""

    def __init__(self, free: int, needed: int, reserve: int) -> None:
        super().__init__(
            errno.ENOSPC,
            f"{free / MB:.0f} MB free, {needed / MB:.2f} MB needed and {reserve / MB:.0f} MB kept in reserve",
        )


def is_disk_full(error: BaseException) -> bool:
    """Postgres's DiskFull (a table or WAL file that could not grow) or an ENOSPC of this process."""
    if isinstance(error, psycopg.errors.DiskFull | DiskSpaceLow):
        return True
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    # A PANIC on a WAL write reaches the client as the server's message on a dying connection.
    return isinstance(error, psycopg.Error) and "No space left on device" in str(error)


def database_disk(settings: Settings) -> str | None:
    """The directory whose filesystem holds the database: the embedded one's; None for an external one.
    Workers are handed the embedded server's URL too, so its data directory is what tells them apart."""
    if (settings.pgdata_dir / "PG_VERSION").exists():
        return str(settings.pgdata_dir)
    return str(settings.services.data_dir) if settings.services.database_url is None else None


def free_bytes(path: str) -> int:
    return shutil.disk_usage(path).free if os.path.exists(path) else 0


def check_space(settings: Settings, needed: int) -> None:
    """Raises DiskSpaceLow when writing `needed` bytes would leave less than the reserve free."""
    where = database_disk(settings)
    if where is None:
        return
    reserve = settings.limits.storage_min_free_mb * MB
    free = free_bytes(where)
    if free - needed < reserve:
        raise DiskSpaceLow(free, needed, reserve)


def index_bytes(texts: list[str]) -> int:
    """A generous estimate of what storing these chunks writes to the database's disk."""
    return sum(len(text.encode()) * WRITE_AMPLIFICATION + CHUNK_OVERHEAD_BYTES for text in texts)

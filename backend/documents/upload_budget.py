"""Upload budgets: bytes and queued jobs, per user and per project, checked before anything is stored.

A request count would stop a teacher at the 61st chapter file and let an abuser send 60 files of 50 MB;
bytes stored in the last hour (per user, per project), a project's stored bytes and its waiting index
jobs bound what fills the disk and the queue instead (LimitSettings: UPLOAD_BYTES_PER_HOUR_*,
PROJECT_MAX_BYTES, PROJECT_MAX_PENDING_JOBS). Two uploads racing may each pass with the other's bytes
uncounted: the overshoot is bounded by one request's size."""

from psycopg_pool import AsyncConnectionPool

from backend.middleware.body_limit import size_text
from core.errors import Refusal, StorageFull, TooLarge, TooMany
from core.messages import Text
from core.runtime.disk import DiskSpaceLow, check_space
from core.settings import Settings
from core.store.content.upload_budget import UploadUsage, upload_usage
from core.store.sql.access import ProjectScope

# The hour's budget frees up gradually; ten minutes is a fair first retry.
RETRY_AFTER_S = 600


def _gib(size: int) -> str:
    return f"{size / 1024**3:.1f} GB" if size >= 1024**3 else size_text(size)


def budget_refusal(
    usage: UploadUsage, settings: Settings, *, incoming_bytes: int, files: int
) -> Refusal | None:
    """The refusal (413 past the project's storage, 429 past a rate) of `files` more files of
    `incoming_bytes`, or None."""
    limits = settings.limits
    if usage.project_bytes_stored + incoming_bytes > limits.project_max_bytes:
        limit, stored = _gib(limits.project_max_bytes), _gib(usage.project_bytes_stored)
        return TooLarge(Text("upload.project_storage_full", limit=limit, stored=stored))
    if usage.user_bytes_last_hour + incoming_bytes > limits.upload_bytes_per_hour_user:
        return _retry_later(
            "upload.user_hourly_budget",
            used=_gib(usage.user_bytes_last_hour),
            limit=_gib(limits.upload_bytes_per_hour_user),
        )
    if usage.project_bytes_last_hour + incoming_bytes > limits.upload_bytes_per_hour_project:
        return _retry_later(
            "upload.project_hourly_budget",
            used=_gib(usage.project_bytes_last_hour),
            limit=_gib(limits.upload_bytes_per_hour_project),
        )
    if usage.project_jobs_pending + files > limits.project_max_pending_jobs:
        return _retry_later(
            "upload.too_many_pending",
            pending=usage.project_jobs_pending,
            limit=limits.project_max_pending_jobs,
        )
    return None


def _retry_later(code: str, **params: str | int) -> TooMany:
    return TooMany(Text(code, **params), retry_after_s=RETRY_AFTER_S)


async def check_upload_budget(
    db: AsyncConnectionPool, settings: Settings, scope: ProjectScope, *, incoming_bytes: int, files: int = 1
) -> None:
    """Raises the refusal when the upload would pass a budget, or fill the database's disk (507: the
    client can do nothing about it, unlike a budget)."""
    try:
        check_space(settings, incoming_bytes * 2)  # the bytes, and the WAL that logs them
    except DiskSpaceLow as error:
        # core.runtime.disk.UPLOAD_DISK_FULL's sentence, with the reason.
        raise StorageFull(Text("upload.disk_full", reason=str(error.strerror))) from None
    async with db.connection() as conn:
        usage = await upload_usage(conn, **scope)
    refusal = budget_refusal(usage, settings, incoming_bytes=incoming_bytes, files=files)
    if refusal is not None:
        raise refusal

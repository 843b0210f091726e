"""What a user and a project have stored lately, for the upload budgets (backend/documents/upload_budget.py).

Counted from the stored versions and jobs themselves rather than from request counters: the budget is
bytes and queued work, so a teacher's 500 small chapter files cost what they weigh, and the figures are
the same for every API process."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection, member_of, scope
from core.store.sql.rows import fetch_one


@dataclass(frozen=True, slots=True)
class UploadUsage:
    user_bytes_last_hour: int
    project_bytes_last_hour: int
    project_bytes_stored: int  # every version of every document
    project_jobs_pending: int  # index and note jobs queued or running


async def upload_usage(conn: Connection, *, project_id: UUID, user_id: UUID) -> UploadUsage:
    usage = await fetch_one(
        conn,
        class_row(UploadUsage),
        "SELECT"
        " (SELECT coalesce(sum(v.size_bytes), 0) FROM document_versions v"
        "   WHERE v.created_by = %(user_id)s AND v.created_at > now() - interval '1 hour')::bigint"
        "   AS user_bytes_last_hour,"
        " (SELECT coalesce(sum(v.size_bytes), 0) FROM document_versions v"
        "   WHERE v.project_id = p.id AND v.created_at > now() - interval '1 hour')::bigint"
        "   AS project_bytes_last_hour,"
        " (SELECT coalesce(sum(v.size_bytes), 0) FROM document_versions v"
        "   WHERE v.project_id = p.id)::bigint AS project_bytes_stored,"
        # Indexing and notes: the work uploads queue. A class's judged answers and fits are not uploads.
        " (SELECT count(*) FROM jobs j WHERE j.project_id = p.id AND j.kind IN ('index', 'write_note')"
        "   AND j.status IN ('queued', 'running'))::int AS project_jobs_pending"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')}",
        scope(project_id, user_id),
    )
    return usage if usage is not None else UploadUsage(0, 0, 0, 0)

"""The jobs rows of the groundedness judge and of the study optimizer (migration 0019): created where
the job is asked for, run through the workers' lifecycle (workers/jobs/framework.py: TrackedJob), and
purged with what they belong to. A judge row belongs to its query_history row (ON DELETE CASCADE); an
optimize row to its student (created_by), deleted when they leave the project (forget_member()). Both
kinds' finished rows are deleted after QUERY_HISTORY_RETENTION_DAYS. Maintenance and worker statements:
no member reads these rows through the API (core/store/runs/jobs.get_job)."""

from typing import Any
from uuid import UUID

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from core.store.runs.jobs import begin_attempt
from core.store.sql.access import Connection, member_of, scope
from core.store.sql.rows import fetch_one, fetch_required

JUDGE = "judge"
OPTIMIZE_STUDY = "optimize_study"
AGENT_KINDS = (JUDGE, OPTIMIZE_STUDY)


async def record_judge_job(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    query_id: UUID,
    job_id: str,
    backlog_max: int | None = None,
) -> bool:
    """The queued row of a sampled answer's judgement, for the asker's own query while they are a member
    (called in the transaction that stores the query). False when it exists already, may not exist, or
    the project has `backlog_max` judgements queued already (a soft bound: two concurrent answers may
    both see one place left)."""
    created = await fetch_one(
        conn,
        scalar_row,
        "INSERT INTO jobs (id, project_id, kind, query_id, created_by)"
        " SELECT %(job_id)s, h.project_id, 'judge', h.id, h.user_id FROM query_history h"
        " WHERE h.id = %(query_id)s AND h.project_id = %(project_id)s AND h.user_id = %(user_id)s"
        f" AND {member_of('h.project_id')}"
        " AND (%(backlog_max)s::int IS NULL OR (SELECT count(*) FROM jobs j WHERE j.project_id = h.project_id"
        "      AND j.kind = 'judge' AND j.status = 'queued') < %(backlog_max)s::int)"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        scope(project_id, user_id, job_id=job_id, query_id=query_id, backlog_max=backlog_max),
    )
    return created is not None


async def request_optimize_job(conn: Connection, *, project_id: UUID, user_id: UUID, job_id: str) -> bool:
    """The student's optimize row, queued: a new one, or their finished one queued again with a fresh
    allowance of deaths (one row per student and project, as one arq job id); one still queued or running
    is left as it is. False when the user is not a member of the project."""
    member: bool = await fetch_required(
        conn,
        scalar_row,
        "WITH member AS (SELECT p.id FROM projects p"
        f"   WHERE p.id = %(project_id)s AND {member_of('p.id')}),"
        " queued AS (INSERT INTO jobs (id, project_id, kind, created_by)"
        "   SELECT %(job_id)s, member.id, 'optimize_study', %(user_id)s FROM member"
        "   ON CONFLICT (id) DO UPDATE SET status = 'queued', stage = 'queued', done = 0, total = 0,"
        "   attempts = 0, deaths = 0, error = NULL, result = NULL, created_at = now(), started_at = NULL,"
        "   finished_at = NULL WHERE jobs.status IN ('succeeded', 'failed') RETURNING id)"
        " SELECT EXISTS (SELECT 1 FROM member)",
        scope(project_id, user_id, job_id=job_id),
    )
    return member


async def start_agent_job(
    conn: Connection, *, project_id: UUID, job_id: str, rerun_succeeded: bool
) -> int | None:
    """The attempt begins (stage `running`): its deaths so far, or None when there is no such row (or it
    succeeded and must not run twice)."""
    return await begin_attempt(
        conn, project_id=project_id, job_id=job_id, stage="running", rerun_succeeded=rerun_succeeded
    )


async def finish_agent_job(
    conn: Connection, *, project_id: UUID, job_id: str, result: dict[str, Any]
) -> None:
    """Succeeded, with what the job did (ids, counts and scores: the result holds no student's text)."""
    await conn.execute(
        "UPDATE jobs SET status = 'succeeded', stage = 'done', result = %(result)s, finished_at = now()"
        " WHERE id = %(job_id)s AND project_id = %(project_id)s AND kind = ANY(%(kinds)s)",
        {"job_id": job_id, "project_id": project_id, "result": Jsonb(result), "kinds": list(AGENT_KINDS)},
    )


async def purge_agent_jobs(conn: Connection, *, retention_days: int) -> int:
    """Judge and optimize rows finished longer ago than the history's window, and those whose student was
    deleted (created_by NULL: nobody to run them for, and their ids name the deleted user). Judge rows of
    purged queries went with them already (ON DELETE CASCADE)."""
    cur = await conn.execute(
        "DELETE FROM jobs WHERE kind IN ('judge', 'optimize_study') AND (created_by IS NULL"
        " OR (status IN ('succeeded', 'failed') AND finished_at < now() - make_interval(days => %(days)s)))",
        {"days": retention_days},
    )
    return cur.rowcount

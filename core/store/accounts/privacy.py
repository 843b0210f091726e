"""Students' personal rows: what a member may erase themself, what leaving a project does to them, and
the retention purges of every table that holds a student's text, and of ended sign-in state.

The forget rule lives in the database (`forget_member()`, migrations/0012), fired by a trigger on every
deletion of a membership row, so no route can forget to apply it; `forget_member` here runs the same
rule explicitly (idempotent). The purges are maintenance, not API reads: they span projects by age."""

from dataclasses import dataclass
from uuid import UUID

from psycopg import AsyncConnection

from core.store.accounts import sessions
from core.store.sql.access import member_of, scope

# Ended sign-in state (sessions, one-time tokens) is kept this long for the account screen and the audit.
SIGN_IN_KEEP_DAYS = 30


@dataclass(frozen=True, slots=True)
class ErasedHistory:
    deleted: int  # query history rows
    evaluations_anonymised: int


async def forget_member(conn: AsyncConnection[object], project_id: UUID, user_id: UUID) -> None:
    """Deletes the user's QA threads (with their messages) and attempts in the project; anonymises their
    query history and evaluations (user_id NULL, question and answer text removed, aggregates kept)."""
    await conn.execute("SELECT forget_member(%s::uuid, %s::uuid)", (project_id, user_id))


async def delete_own_thread(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, thread_id: UUID
) -> bool:
    """The caller's own thread and its messages; False when it is not theirs (or not there)."""
    cur = await conn.execute(
        "DELETE FROM qa_threads t WHERE t.id = %(thread_id)s AND t.project_id = %(project_id)s"
        f" AND t.user_id = %(user_id)s AND {member_of('t.project_id')}",
        scope(project_id, user_id, thread_id=thread_id),
    )
    return cur.rowcount == 1


async def delete_own_history(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID
) -> ErasedHistory:
    """The caller's query history in the project, and the text their evaluations copied from it (the
    scores stay, anonymised, in the project's aggregates). Counts of both."""
    params = scope(project_id, user_id)
    async with conn.transaction():
        cur = await conn.execute(
            "UPDATE rag_evaluations e SET user_id = NULL, question = '', answer = '', claims = '[]'::jsonb"
            " WHERE e.project_id = %(project_id)s AND e.user_id = %(user_id)s"
            f" AND {member_of('e.project_id')}",
            params,
        )
        anonymised = cur.rowcount
        cur = await conn.execute(
            "DELETE FROM query_history h WHERE h.project_id = %(project_id)s AND h.user_id = %(user_id)s"
            f" AND {member_of('h.project_id')}",
            params,
        )
    return ErasedHistory(deleted=cur.rowcount, evaluations_anonymised=anonymised)


async def purge_threads(conn: AsyncConnection[object], *, retention_days: int) -> int:
    """Threads idle (no new turn) for longer than the window, with their messages (ON DELETE CASCADE)."""
    cur = await conn.execute(
        "DELETE FROM qa_threads WHERE updated_at < now() - make_interval(days => %(days)s)",
        {"days": retention_days},
    )
    return cur.rowcount


async def purge_attempts(conn: AsyncConnection[object], *, retention_days: int) -> int:
    cur = await conn.execute(
        "DELETE FROM question_attempts WHERE created_at < now() - make_interval(days => %(days)s)",
        {"days": retention_days},
    )
    return cur.rowcount


async def purge_evaluations(conn: AsyncConnection[object], *, retention_days: int) -> int:
    cur = await conn.execute(
        "DELETE FROM rag_evaluations WHERE created_at < now() - make_interval(days => %(days)s)",
        {"days": retention_days},
    )
    return cur.rowcount


async def purge_sign_in_state(
    conn: AsyncConnection[object], *, keep_days: int = SIGN_IN_KEEP_DAYS
) -> dict[str, int]:
    """Rows of sign-ins that can no longer sign anyone in, per table: browser sessions ended (revoked or
    expired) and one-time tokens expired more than keep_days ago; sign-ins in flight (auth_flows) and
    LTI nonces past their expiry (a replayed launch is refused by its token's own expiry from then on)."""
    deleted = {"browser_sessions": await sessions.purge_ended(conn, keep_days=keep_days)}
    cur = await conn.execute("DELETE FROM auth_flows WHERE expires_at < now()")
    deleted["auth_flows"] = cur.rowcount
    cur = await conn.execute("DELETE FROM lti_nonces WHERE expires_at < now()")
    deleted["lti_nonces"] = cur.rowcount
    cur = await conn.execute(
        "DELETE FROM one_time_tokens WHERE expires_at < now() - make_interval(days => %(days)s)",
        {"days": keep_days},
    )
    deleted["one_time_tokens"] = cur.rowcount
    return deleted

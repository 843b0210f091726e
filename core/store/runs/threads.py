"""RAG QA threads and their messages. A thread belongs to one user in one project: every query
here is scoped by project, owner and membership, so another user's thread reads as missing.

Messages are written by langchain-postgres' PostgresChatMessageHistory (its serialisation and its
table layout, see migrations/0003); they are read here, with the scoping the library lacks."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from langchain_core.messages import BaseMessage, messages_from_dict
from langchain_postgres import PostgresChatMessageHistory
from psycopg import AsyncConnection
from psycopg.rows import class_row, scalar_row

from core.store.sql.access import member_of, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class Thread:
    id: UUID
    project_id: UUID
    user_id: UUID
    title: str
    created_at: datetime
    updated_at: datetime  # the last turn


MESSAGES_TABLE = "qa_messages"
_COLUMNS = columns(Thread, prefix="t.")
_OWN = f"t.project_id = %(project_id)s AND t.user_id = %(user_id)s AND {member_of('t.project_id')}"


async def create_thread(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, title: str
) -> Thread:
    row = await fetch_one(
        conn,
        class_row(Thread),
        "INSERT INTO qa_threads (project_id, user_id, title)"
        f" SELECT p.id, %(user_id)s, %(title)s FROM projects p WHERE p.id = %(project_id)s"
        f" AND {member_of('p.id')} RETURNING id, project_id, user_id, title, created_at, updated_at",
        scope(project_id, user_id, title=title[:200]),
    )
    if row is None:
        raise LookupError("not a member of this project")
    return row


async def get_thread(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, thread_id: UUID
) -> Thread | None:
    query = f"SELECT {_COLUMNS} FROM qa_threads t WHERE t.id = %(thread_id)s AND {_OWN}"
    return await fetch_one(conn, class_row(Thread), query, scope(project_id, user_id, thread_id=thread_id))


async def list_threads(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, page: Page
) -> list[Thread]:
    return await fetch_all(
        conn,
        class_row(Thread),
        f"SELECT {_COLUMNS} FROM qa_threads t WHERE {_OWN} ORDER BY t.updated_at DESC, t.id"
        " LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page),
    )


async def recent_messages(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    thread_id: UUID,
    limit: int | None = None,
) -> list[BaseMessage]:
    """The thread's last `limit` messages (all when None), oldest first."""
    messages = await fetch_all(
        conn,
        scalar_row,
        "SELECT message FROM (SELECT m.id, m.message FROM qa_messages m"
        " JOIN qa_threads t ON t.id = m.session_id AND t.project_id = m.project_id"
        f" WHERE m.session_id = %(thread_id)s AND {_OWN}"
        " ORDER BY m.id DESC LIMIT %(limit)s) recent ORDER BY id",
        scope(project_id, user_id, thread_id=thread_id, limit=limit),
    )
    return messages_from_dict(messages)


async def add_messages(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    thread_id: UUID,
    messages: list[BaseMessage],
) -> bool:
    """Appends to the caller's own thread; False (nothing written) when it is not theirs."""
    cur = await conn.execute(
        f"UPDATE qa_threads t SET updated_at = now() WHERE t.id = %(thread_id)s AND {_OWN}",
        scope(project_id, user_id, thread_id=thread_id),
    )
    if cur.rowcount != 1:
        return False
    # The library only inserts here: the connection's row factory (its type asks for tuples) is not used.
    history = PostgresChatMessageHistory(
        MESSAGES_TABLE,
        str(thread_id),
        async_connection=conn,  # type: ignore[arg-type]
    )
    await history.aadd_messages(messages)
    return True

"""Projects; every read and write is scoped to the caller's membership (members:
core/store/accounts/members.py)."""

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.store.sql.access import Connection, member_of, owner_of, scope, writer_of
from core.store.sql.listing import Page, page_or_all
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required

_UPDATABLE = {"name", "description", "language", "groundedness_sample_rate", "max_attempts_per_question"}
_UPDATABLE |= {"students_study_own_items"}
_OWNER_ONLY = {"max_attempts_per_question"}
_OWNER_ONLY |= {"students_study_own_items"}
_UPDATABLE |= {"exam_date"}  # the study queue's exam mode
_OWNER_ONLY |= {"exam_date"}


@dataclass(frozen=True, slots=True)
class Project:
    """A project as one member sees it: `role` is the caller's own."""

    id: UUID
    name: str
    description: str
    language: str
    groundedness_sample_rate: float | None
    max_attempts_per_question: int | None  # None: unlimited
    students_study_own_items: bool
    exam_date: date | None
    created_at: datetime
    updated_at: datetime
    role: str


# The caller's role: looked up in the list, joined as `m` where one project is read.
_COLUMNS = columns(
    Project,
    prefix="p.",
    computed={
        "role": "(SELECT m.role FROM project_members m WHERE m.project_id = p.id AND m.user_id = %(user_id)s)"
    },
)
_JOINED_COLUMNS = columns(Project, prefix="p.", computed={"role": "m.role"})


async def create_project(
    conn: Connection,
    *,
    user_id: UUID,
    name: str,
    description: str,
    language: str,
    groundedness_sample_rate: float | None = None,
) -> Project:
    async with conn.transaction():
        project_id: UUID = await fetch_required(
            conn,
            scalar_row,
            "INSERT INTO projects (name, description, language, groundedness_sample_rate, created_by)"
            " VALUES (%(name)s, %(description)s, %(language)s, %(rate)s, %(user_id)s) RETURNING id",
            {
                "name": name,
                "description": description,
                "language": language,
                "rate": groundedness_sample_rate,
                "user_id": user_id,
            },
        )
        await conn.execute(
            "INSERT INTO project_members (project_id, user_id, role) VALUES (%s, %s, 'owner')",
            (project_id, user_id),
        )
    project = await get_project(conn, project_id=project_id, user_id=user_id)
    assert project is not None
    return project


async def list_projects(conn: Connection, *, user_id: UUID, page: Page | None = None) -> list[Project]:
    """Oldest first; `page` None: all of them."""
    return await fetch_all(
        conn,
        class_row(Project),
        f"SELECT {_COLUMNS} FROM projects p WHERE {member_of('p.id')} ORDER BY p.created_at, p.id"
        " LIMIT %(limit)s OFFSET %(offset)s",
        {"user_id": user_id, **page_or_all(page)},
    )


async def get_project(conn: Connection, *, project_id: UUID, user_id: UUID) -> Project | None:
    return await fetch_one(
        conn,
        class_row(Project),
        f"SELECT {_JOINED_COLUMNS} FROM projects p"
        " JOIN project_members m ON m.project_id = p.id AND m.user_id = %(user_id)s"
        " WHERE p.id = %(project_id)s",
        scope(project_id, user_id),
    )


async def update_project(
    conn: Connection, *, project_id: UUID, user_id: UUID, changes: dict[str, Any]
) -> bool:
    allowed = {key: value for key, value in changes.items() if key in _UPDATABLE}
    if not allowed:
        return True
    assignments = ", ".join(f"{key} = %({key})s" for key in allowed)
    # Editors change the course's content settings; a student's attempt limit is the owner's.
    allowed_role = owner_of("p.id") if _OWNER_ONLY & allowed.keys() else writer_of("p.id")
    cur = await conn.execute(
        f"UPDATE projects p SET {assignments}, updated_at = now()"
        f" WHERE p.id = %(project_id)s AND {allowed_role}",
        {**allowed, "project_id": project_id, "user_id": user_id},
    )
    return cur.rowcount == 1


async def delete_project(conn: Connection, *, project_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute(
        f"DELETE FROM projects p WHERE p.id = %(project_id)s AND {owner_of('p.id')}",
        scope(project_id, user_id),
    )
    return cur.rowcount == 1

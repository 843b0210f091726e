"""Content Planner outlines, and what the planner reads to plan a whole project.

Reads are scoped by membership, writes by the editor/owner role, in the SQL itself."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, in_project, member_of, scope, writer_of
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one


@dataclass(frozen=True, slots=True)
class Plan:
    id: UUID
    project_id: UUID
    topic: str | None  # None: the whole project was planned
    outline: dict[str, Any]  # agents/planner/state.outline_document's JSON
    created_by: UUID
    created_at: datetime


_COLUMNS = columns(Plan, prefix="pl.")


@dataclass(frozen=True, slots=True)
class _Headings:
    title: str
    path: list[str]
    first: int


async def create_plan(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    topic: str | None,
    outline: dict[str, Any],
) -> Plan | None:
    """None when the caller may not write to the project."""
    return await fetch_one(
        conn,
        class_row(Plan),
        "INSERT INTO plans (project_id, topic, outline, created_by)"
        " SELECT p.id, %(topic)s, %(outline)s, %(user_id)s"
        f" FROM projects p WHERE p.id = %(project_id)s AND {writer_of('p.id')}"
        " RETURNING id, project_id, topic, outline, created_by, created_at",
        scope(project_id, user_id, topic=topic, outline=Jsonb(outline)),
    )


async def get_plan(conn: Connection, *, project_id: UUID, user_id: UUID, plan_id: UUID) -> Plan | None:
    query = f"SELECT {_COLUMNS} FROM plans pl WHERE pl.id = %(plan_id)s AND {in_project('pl')}"
    return await fetch_one(conn, class_row(Plan), query, scope(project_id, user_id, plan_id=plan_id))


async def list_plans(conn: Connection, *, project_id: UUID, user_id: UUID, page: Page) -> list[Plan]:
    return await fetch_all(
        conn,
        class_row(Plan),
        f"SELECT {_COLUMNS} FROM plans pl WHERE {in_project('pl')} ORDER BY pl.created_at DESC, pl.id"
        " LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, **page),
    )


async def project_headings(
    conn: Connection, *, project_id: UUID, user_id: UUID, limit: int = 60
) -> list[str]:
    """Titles of the uploaded documents and their top two heading levels, in reading order:
    the words a plan of the whole project should cover (generated notes are not material)."""
    headings = await fetch_all(
        conn,
        class_row(_Headings),
        "SELECT d.title, c.section_path[1:2] AS path, min(c.ordinal) AS first"
        " FROM documents d JOIN chunks c ON c.document_id = d.id AND c.project_id = d.project_id"
        " WHERE d.project_id = %(project_id)s AND d.kind = 'uploaded'"
        f" AND {member_of('d.project_id')}"
        " GROUP BY d.id, d.title, d.created_at, c.section_path[1:2]"
        " ORDER BY d.created_at, d.id, first LIMIT %(limit)s",
        scope(project_id, user_id, limit=limit),
    )
    seen: dict[str, None] = {}
    for row in headings:
        for heading in (row.title, *row.path):
            seen.setdefault(" ".join(str(heading).split()), None)
    return [heading for heading in seen if heading]

"""SQL fragments that scope a query to the projects a user belongs to.

Every API-facing query embeds one of these, so membership is enforced by the database query
itself and not only by the route that calls it. `project_column` names the row's project id,
e.g. "p.id" or "d.project_id"; the query must bind %(user_id)s.

`Connection` is what the store functions take: any borrowed connection, whatever its own row factory,
since every query that reads rows names its own (class_row, scalar_row)."""

from typing import Any, TypeAlias, TypedDict
from uuid import UUID

from psycopg import AsyncConnection

Connection: TypeAlias = AsyncConnection[object]

_TEMPLATE = (
    "EXISTS (SELECT 1 FROM project_members m"
    " WHERE m.project_id = {column} AND m.user_id = %(user_id)s{roles})"
)


def member_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles="")


def writer_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles=" AND m.role IN ('owner', 'editor')")


def in_project(alias: str) -> str:
    """SQL: the row `alias` is in project %(project_id)s, and the caller is a member of it."""
    return f"{alias}.project_id = %(project_id)s AND {member_of(f'{alias}.project_id')}"


def owner_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles=" AND m.role = 'owner'")


class ProjectScope(TypedDict):
    """The store's keys for a project-scoped call: the project and the caller, checked in its SQL."""

    project_id: UUID
    user_id: UUID


def scope(project_id: UUID, user_id: UUID, **more: Any) -> dict[str, Any]:
    """A scoped query's parameters: the project, the caller these fragments bind, and its own."""
    return {"project_id": project_id, "user_id": user_id, **more}

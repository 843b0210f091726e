"""SQL fragments that scope a query to the projects a user belongs to.

Every API-facing query embeds one of these, so membership is enforced by the database query
itself and not only by the route that calls it. `project_column` names the row's project id,
e.g. "p.id" or "d.project_id"; the query must bind %(user_id)s."""

_TEMPLATE = (
    "EXISTS (SELECT 1 FROM project_members m"
    " WHERE m.project_id = {column} AND m.user_id = %(user_id)s{roles})"
)


def member_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles="")


def writer_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles=" AND m.role IN ('owner', 'editor')")


def owner_of(project_column: str) -> str:
    return _TEMPLATE.format(column=project_column, roles=" AND m.role = 'owner'")

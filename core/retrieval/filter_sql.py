"""Filters as a SQL fragment over chunks `c`, always behind `c.project_id = %(project_id)s`."""

from typing import Any
from uuid import UUID

from core.retrieval.types import Filters
from core.store.sql.access import member_of


def filter_clause(filters: Filters, user_id: UUID | None = None) -> tuple[str, dict[str, Any]]:
    """With a user, the caller's membership of the project is checked in the same statement."""
    parts: list[str] = []
    params: dict[str, Any] = {}
    if user_id is not None:
        parts.append(member_of("c.project_id"))
        params["user_id"] = user_id
    if filters.document_ids:
        parts.append("c.document_id = ANY(%(f_documents)s)")
        params["f_documents"] = list(filters.document_ids)
    if filters.section:
        # section_path[1:n] = prefix; the btree-free comparison is fine on an already narrowed set.
        parts.append("c.section_path[1:%(f_section_len)s] = %(f_section)s::text[]")
        params["f_section_len"] = len(filters.section)
        params["f_section"] = list(filters.section)
    if filters.touches_documents:
        conditions = ["d.id = c.document_id", "d.project_id = c.project_id"]
        if filters.source_type is not None:
            conditions.append("d.source_type = %(f_source_type)s")
            params["f_source_type"] = filters.source_type
        if filters.kind is not None:
            conditions.append("d.kind = %(f_kind)s")
            params["f_kind"] = filters.kind
        parts.append(f"EXISTS (SELECT 1 FROM documents d WHERE {' AND '.join(conditions)})")
    return "".join(f" AND {part}" for part in parts), params

"""GET /projects/{id}/audit: the project's security events, for its owners."""

from typing import Annotated

from fastapi import APIRouter, Query

from backend.deps import DbDep, ProjectOwnerDep
from backend.schemas.account import SecurityEventOut
from core.store import security_events

router = APIRouter(prefix="/projects/{project_id}", tags=["audit"])


@router.get("/audit")
async def project_events(
    access: ProjectOwnerDep,
    db: DbDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[SecurityEventOut]:
    """Who changed members, documents and settings, newest first (owners only: editors 403, others 404)."""
    async with db.connection() as conn:
        rows = await security_events.project_events(
            conn, project_id=access.id, user_id=access.user.id, limit=limit, offset=offset
        )
    return [SecurityEventOut.model_validate(row) for row in rows]

"""GET /projects/{id}/audit: the project's security events, for its owners."""

from fastapi import APIRouter

from backend.accounts.schemas import SecurityEventOut
from backend.deps import DbDep, ProjectOwnerDep
from backend.web.paging import EventPageDep
from core.store.accounts import security_events

router = APIRouter(prefix="/projects/{project_id}", tags=["audit"])


@router.get("/audit")
async def project_events(access: ProjectOwnerDep, db: DbDep, page: EventPageDep) -> list[SecurityEventOut]:
    """Who changed members, documents and settings, newest first (owners only: editors 403, others 404)."""
    async with db.connection() as conn:
        rows = await security_events.project_events(conn, **access.scope, page=page)
    return [SecurityEventOut.model_validate(row) for row in rows]

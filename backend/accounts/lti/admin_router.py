"""LTI platforms (LMSs), registered and removed by an administrator; both go to the security log."""

from uuid import UUID

from fastapi import APIRouter, HTTPException, Response, status

from backend.accounts.lti.schemas import PlatformIn, PlatformOut
from backend.deps import AdminDep, DbDep
from backend.web.audit import AuditDep
from core.store import lti as lti_store
from core.store.lti import Platform

router = APIRouter(prefix="/admin/lti/platforms", tags=["lti"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def register_platform(body: PlatformIn, db: DbDep, admin: AdminDep, audit: AuditDep) -> PlatformOut:
    """409 when this issuer and client id are registered already."""
    async with db.connection() as conn, conn.transaction():
        platform = await lti_store.register_platform(conn, **body.model_dump())
        if platform is None:
            raise HTTPException(
                status.HTTP_409_CONFLICT, "A platform with this issuer and client id is registered already."
            )
        await audit.event(
            conn, "lti.platform_registered", admin.id, None, _shown(platform), about=platform.id
        )
    return PlatformOut.model_validate(platform)


@router.get("")
async def list_platforms(db: DbDep, admin: AdminDep) -> list[PlatformOut]:
    async with db.connection() as conn:
        return [PlatformOut.model_validate(row) for row in await lti_store.list_platforms(conn)]


@router.delete("/{platform_id}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_platform(platform_id: UUID, db: DbDep, admin: AdminDep, audit: AuditDep) -> Response:
    """Its course mappings go too (the projects and their members stay); its launches stop at once."""
    async with db.connection() as conn, conn.transaction():
        platform = await lti_store.delete_platform(conn, platform_id=platform_id)
        if platform is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, "No such platform.")
        await audit.event(conn, "lti.platform_removed", admin.id, None, _shown(platform), about=platform.id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _shown(platform: Platform) -> dict[str, object]:
    """What the security log keeps of a platform: how to recognise it."""
    return {"name": platform.name, "issuer": platform.issuer, "client_id": platform.client_id}

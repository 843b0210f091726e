"""LTI platforms (LMSs), registered and removed by an administrator (backend/accounts/lti/service.py);
both go to the security log."""

from uuid import UUID

from fastapi import APIRouter, Response, status

from backend.accounts.lti import service
from backend.accounts.lti.schemas import PlatformIn, PlatformOut
from backend.deps import AdminDep, DbDep
from backend.web.audit import AuditDep

router = APIRouter(prefix="/admin/lti/platforms", tags=["lti"])


@router.post("", status_code=status.HTTP_201_CREATED)
async def register_platform(body: PlatformIn, db: DbDep, admin: AdminDep, audit: AuditDep) -> PlatformOut:
    """409 when this issuer and client id are registered already."""
    platform = await service.register_platform(db, audit, actor_id=admin.id, given=body)
    return PlatformOut.model_validate(platform)


@router.get("")
async def list_platforms(db: DbDep, admin: AdminDep) -> list[PlatformOut]:
    return [PlatformOut.model_validate(row) for row in await service.list_platforms(db)]


@router.delete("/{platform_id}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_platform(platform_id: UUID, db: DbDep, admin: AdminDep, audit: AuditDep) -> Response:
    """Its course mappings go too (the projects and their members stay); its launches stop at once."""
    await service.remove_platform(db, audit, actor_id=admin.id, platform_id=platform_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

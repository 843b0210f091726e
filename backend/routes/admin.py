"""Server administration, for administrators only (AdminDep: 403 otherwise): the accounts, disabling
and enabling them, reset links, and the whole security log."""

from uuid import UUID

from fastapi import APIRouter, HTTPException, Query, Request, status

from backend.deps import AdminDep, DbDep, SettingsDep
from backend.schemas.account import SecurityEventOut
from backend.schemas.admin import AccountOut, ResetLinkOut
from backend.services import reset_links, security_log
from backend.services.paging import EventPageDep, PageDep
from core.store import accounts, security_events

router = APIRouter(prefix="/admin", tags=["administration"])


def _no_account() -> HTTPException:
    return HTTPException(status.HTTP_404_NOT_FOUND, "No such account.")


@router.get("/users")
async def list_users(
    admin: AdminDep, db: DbDep, page: PageDep, q: str | None = Query(default=None, max_length=254)
) -> list[AccountOut]:
    """Every account by email; `q` keeps those whose email contains it."""
    async with db.connection() as conn:
        rows = await accounts.list_accounts(conn, query=q or None, **page)
    return [AccountOut.model_validate(row) for row in rows]


async def _set_disabled(
    request: Request, db: DbDep, admin: AdminDep, user_id: UUID, *, disabled: bool
) -> AccountOut:
    async with db.connection() as conn, conn.transaction():
        row = await accounts.set_disabled(conn, user_id=user_id, disabled=disabled)
        if row is None:
            raise _no_account()
        await security_log.record(
            conn,
            request,
            action="user.disabled" if disabled else "user.enabled",
            actor_user_id=admin.id,
            target_user_id=user_id,
        )
    return AccountOut.model_validate(row)


@router.post("/users/{user_id}/disable")
async def disable_user(request: Request, user_id: UUID, admin: AdminDep, db: DbDep) -> AccountOut:
    """Every session and key of the account fails from its next request (checked in SQL), until enabled."""
    if user_id == admin.id:
        raise HTTPException(status.HTTP_409_CONFLICT, "You cannot disable your own account.")
    return await _set_disabled(request, db, admin, user_id, disabled=True)


@router.post("/users/{user_id}/enable")
async def enable_user(request: Request, user_id: UUID, admin: AdminDep, db: DbDep) -> AccountOut:
    """The account's sessions and keys work again (those not expired or revoked meanwhile)."""
    return await _set_disabled(request, db, admin, user_id, disabled=False)


@router.post("/users/{user_id}/reset-link")
async def reset_link(
    request: Request, user_id: UUID, admin: AdminDep, db: DbDep, settings: SettingsDep
) -> ResetLinkOut:
    """A one-time link to set a new password (RESET_LINK_HOURS), mailed to the account when SMTP is set;
    earlier links of the account stop working."""
    async with db.connection() as conn, conn.transaction():
        target = await accounts.account(conn, user_id=user_id)
        if target is None:
            raise _no_account()
        out = await reset_links.issue(conn, request, settings, user_id=user_id, actor_id=admin.id)
    return await reset_links.mail_link(settings, target.email, out)


@router.get("/audit")
async def audit(admin: AdminDep, db: DbDep, page: EventPageDep) -> list[SecurityEventOut]:
    """Every security event of the server, newest first."""
    async with db.connection() as conn:
        rows = await security_events.all_events(conn, **page)
    return [SecurityEventOut.model_validate(row) for row in rows]

"""Server administration, for administrators only (AdminDep: 403 otherwise): the accounts (creating a
teacher's, marking teachers, disabling and enabling, reset links) and the whole security log. The LMSs an
administrator registers: backend/accounts/lti/admin_router.py."""

from uuid import UUID

from fastapi import APIRouter, Query, Request, status

from backend.accounts.errors import Conflict
from backend.accounts.schemas import (
    AccountChange,
    AccountCreate,
    AccountCreated,
    AccountOut,
    ResetLinkOut,
    SecurityEventOut,
)
from backend.accounts.service import admin, credentials, recovery
from backend.deps import AdminDep, DbDep, SettingsDep
from backend.web.audit import AuditDep
from backend.web.browser import public_base
from backend.web.paging import EventPageDep, PageDep

router = APIRouter(prefix="/admin", tags=["administration"])


@router.get("/users")
async def list_users(
    admin_user: AdminDep, db: DbDep, page: PageDep, q: str | None = Query(default=None, max_length=254)
) -> list[AccountOut]:
    """Every account by email; `q` keeps those whose email contains it."""
    rows = await admin.list_accounts(db, query=q or None, page=page)
    return [AccountOut.model_validate(row) for row in rows]


@router.post("/users", status_code=status.HTTP_201_CREATED)
async def create_user(
    body: AccountCreate,
    request: Request,
    admin_user: AdminDep,
    db: DbDep,
    settings: SettingsDep,
    audit: AuditDep,
) -> AccountCreated:
    """A new account (a teacher unless `is_teacher` is false) without a password, and a one-time link
    that sets it: hand it over in person, or it is mailed to the address when mail is set up. 409 when
    the email has an account."""
    created = await admin.create_account(
        db,
        audit,
        settings,
        base=public_base(request, settings),
        admin_id=admin_user.id,
        email=body.email,
        display_name=body.display_name,
        is_teacher=body.is_teacher,
    )
    link = created.link
    return AccountCreated(
        account=AccountOut.model_validate(created.account),
        link=link.link,
        expires_at=link.expires_at,
        mailed=link.mailed,
    )


@router.patch("/users/{user_id}")
async def change_user(
    user_id: UUID, body: AccountChange, admin_user: AdminDep, db: DbDep, audit: AuditDep
) -> AccountOut:
    """Marks the account a teacher or not (with PROJECT_CREATORS=teachers, only teachers and
    administrators create projects)."""
    changed = await admin.set_teacher(
        db, audit, admin_id=admin_user.id, user_id=user_id, teacher=body.is_teacher
    )
    return AccountOut.model_validate(changed)


@router.post("/users/{user_id}/disable")
async def disable_user(user_id: UUID, admin_user: AdminDep, db: DbDep, audit: AuditDep) -> AccountOut:
    """Every session and key of the account ends now; enabling it later revives none of them."""
    if user_id == admin_user.id:
        raise Conflict("You cannot disable your own account.")
    row = await credentials.set_disabled(db, audit, actor_id=admin_user.id, user_id=user_id, disabled=True)
    return AccountOut.model_validate(row)


@router.post("/users/{user_id}/enable")
async def enable_user(user_id: UUID, admin_user: AdminDep, db: DbDep, audit: AuditDep) -> AccountOut:
    """The account may sign in again (its old sessions and keys stay ended)."""
    row = await credentials.set_disabled(db, audit, actor_id=admin_user.id, user_id=user_id, disabled=False)
    return AccountOut.model_validate(row)


@router.post("/users/{user_id}/reset-link")
async def reset_link(
    request: Request, user_id: UUID, admin_user: AdminDep, db: DbDep, settings: SettingsDep, audit: AuditDep
) -> ResetLinkOut:
    """A one-time link to set a new password (RESET_LINK_HOURS), mailed to the account's own address when
    mail is set up; earlier links of the account stop working."""
    link = await recovery.admin_link(
        db, audit, settings, base=public_base(request, settings), admin_id=admin_user.id, user_id=user_id
    )
    return ResetLinkOut(link=link.link, expires_at=link.expires_at, mailed=link.mailed)


@router.get("/audit")
async def audit(admin_user: AdminDep, db: DbDep, page: EventPageDep) -> list[SecurityEventOut]:
    """Every security event of the server, newest first."""
    return [SecurityEventOut.model_validate(row) for row in await admin.events(db, page=page)]

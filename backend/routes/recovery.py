"""The first administrator (POST /auth/setup, with the one-time token `studyai up` prints while the server
has none) and password reset links (POST /auth/reset). Both spend a one-time token in one statement, set
an Argon2id hash (computed in a thread, before the transaction), and sign the browser in."""

from fastapi import APIRouter, HTTPException, Request, Response, status

from backend.deps import DbDep, SameOrigin, SettingsDep
from backend.schemas.admin import ResetIn, ResetValid, SetupIn
from backend.schemas.auth import SessionOut
from backend.services import security_log
from backend.services.sign_in import refuse_weak_password, sign_in_browser
from core.accounts.passwords import hash_password_async
from core.store import account_admin, accounts, sessions

router = APIRouter(prefix="/auth", tags=["sign-in"])

ALREADY_SET_UP = "This server already has an administrator: sign in."
WRONG_SETUP_TOKEN = (
    "This set-up link is wrong, used or expired: run `studyai users setup-token` on the server for a new one."
)
RESET_GONE = "This reset link is no longer valid: ask for a new one."


@router.post("/setup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def setup(
    body: SetupIn, request: Request, response: Response, db: DbDep, settings: SettingsDep
) -> SessionOut:
    """Creates the first administrator (or makes the account with this email one, with this password) and
    signs the browser in. 410 once the server has an administrator, or when the token is not a live one."""
    async with db.connection() as conn:
        if await accounts.count_admins(conn) > 0:
            raise HTTPException(status.HTTP_410_GONE, ALREADY_SET_UP)
    refuse_weak_password(body.password, settings, body.email)
    password_hash = await hash_password_async(body.password)
    async with db.connection() as conn, conn.transaction():
        await account_admin.lock_setup(conn)  # a second set-up waits, then finds the administrator
        if await accounts.count_admins(conn) > 0:
            raise HTTPException(status.HTTP_410_GONE, ALREADY_SET_UP)
        if await accounts.spend_token(conn, kind="setup", token=body.token) is None:
            raise HTTPException(status.HTTP_410_GONE, WRONG_SETUP_TOKEN)
        created = await accounts.create_account(
            conn, email=body.email, password_hash=password_hash, display_name=body.display_name, is_admin=True
        )
        if created is not None:
            user_id = created.id
            await security_log.record_own(conn, request, "user.created", user_id, {"via": "setup"})
        else:
            # The email has an account already: it becomes the administrator, with this password, and
            # whoever knew its old one is signed out.
            existing = await accounts.account_by_email(conn, email=body.email)
            assert existing is not None  # the insert just conflicted on it
            user_id = existing.id
            await accounts.set_password(conn, user_id=user_id, password_hash=password_hash)
            await accounts.set_disabled(conn, user_id=user_id, disabled=False)
            await accounts.set_admin(conn, user_id=user_id)
            await sessions.revoke_all_sessions(conn, user_id=user_id)
        await security_log.record_own(conn, request, "user.admin_granted", user_id, {"via": "setup"})
        return await sign_in_browser(conn, request, response, settings, user_id=user_id, via="setup")


@router.get("/reset/{token}")
async def reset_valid(token: str, db: DbDep) -> ResetValid:
    """Whether a reset link still works (the app asks before showing the new-password form)."""
    async with db.connection() as conn:
        target = await account_admin.reset_target(conn, token=token)
    return ResetValid(valid=target is not None and not target.disabled)


@router.post("/reset", dependencies=[SameOrigin])
async def reset(
    body: ResetIn, request: Request, response: Response, db: DbDep, settings: SettingsDep
) -> SessionOut:
    """Sets the account's password with a reset link (once), ends every session of the account and signs
    this browser in. 410 when the link is unknown, used or expired; 422 for a weak password (the link is
    not spent); 403 while the account is disabled."""
    async with db.connection() as conn:
        target = await account_admin.reset_target(conn, token=body.token)
    if target is None:
        raise HTTPException(status.HTTP_410_GONE, RESET_GONE)
    if target.disabled:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "This account is disabled: ask an administrator.")
    refuse_weak_password(body.password, settings, target.email)
    password_hash = await hash_password_async(body.password)
    async with db.connection() as conn, conn.transaction():
        spent = await accounts.spend_token(conn, kind="reset", token=body.token)
        if spent is None or spent.user_id != target.user_id:
            raise HTTPException(status.HTTP_410_GONE, RESET_GONE)  # spent by another request meanwhile
        await accounts.set_password(conn, user_id=target.user_id, password_hash=password_hash)
        ended = await sessions.revoke_all_sessions(conn, user_id=target.user_id)
        await security_log.record_own(
            conn, request, "password.reset_used", target.user_id, {"sessions_ended": ended}
        )
        return await sign_in_browser(conn, request, response, settings, user_id=target.user_id, via="reset")

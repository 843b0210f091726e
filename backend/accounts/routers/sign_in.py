"""Signing in, for everyone: the server's sign-in options, a password sign-in, the session, sign-out,
self-service sign-up, the first administrator (with the set-up token `studyai up` prints), reset links and
"forgot your password". Sign-in routes set a cookie and have none to check yet: each refuses a foreign
Origin (login CSRF)."""

import asyncio
import time
from contextlib import suppress

from fastapi import APIRouter, BackgroundTasks, Request, Response, status

from backend.accounts.budgets import BudgetsDep
from backend.accounts.errors import NotFound
from backend.accounts.routers.shaping import DoorDep, session_out
from backend.accounts.schemas import (
    Accepted,
    AuthConfig,
    Forgot,
    Login,
    ResetCheck,
    ResetIn,
    ResetValid,
    SessionOut,
    SetupIn,
    Signup,
)
from backend.accounts.service import credentials, mail, recovery, sign_in
from backend.deps import DbDep, SameOrigin, SettingsDep, UserDep
from backend.web.audit import AuditDep
from backend.web.browser import clear_session_cookie

router = APIRouter(tags=["sign-in"])
# "Forgot your password" answers no sooner than this: the same time whether or not a link was made.
FORGOT_ANSWER_S = 0.5


@router.get("/auth/config")
async def auth_config(db: DbDep, settings: SettingsDep) -> AuthConfig:
    setup_required = await recovery.setup_required(db)
    return AuthConfig(
        signup_enabled=settings.accounts.signup_enabled,
        password_min_length=settings.accounts.password_min_length,
        oidc_enabled=settings.oidc.enabled,
        oidc_name=settings.oidc.name if settings.oidc.enabled else None,
        setup_required=setup_required,
        mail_enabled=mail.mail_base(settings) is not None,
        project_creators=settings.accounts.project_creators,
    )


@router.post("/auth/login", dependencies=[SameOrigin])
async def login(body: Login, door: DoorDep, budgets: BudgetsDep) -> SessionOut:
    """Signs the browser in (a session cookie) and returns the account and its CSRF token. 401 for a wrong
    email or password alike; 429 once this account's wrong-password budget at this address is spent."""
    async with budgets.password(body.email):
        signed = await sign_in.login(
            door.db, door.audit, door.settings, email=body.email, password=body.password
        )
    return door.signed_in(signed)


@router.get("/auth/session")
async def current_session(db: DbDep, settings: SettingsDep, user: UserDep) -> SessionOut:
    """The signed-in account and the session's CSRF token (the app reads it after a reload). With an API
    key: the key's account and an empty token (keys need none)."""
    account = await sign_in.current(db, user_id=user.id)
    return session_out(account, settings, csrf_token=user.csrf_token or "", session_id=user.session_id)


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
async def logout(
    request: Request, db: DbDep, settings: SettingsDep, user: UserDep, audit: AuditDep
) -> Response:
    """Ends the browser's session (its cookie fails from now on) and clears the cookie."""
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    if user.session_id is not None:
        # Ended meanwhile (another tab signed out): the cookie goes all the same.
        with suppress(NotFound):
            await credentials.end_session(
                db, audit, user_id=user.id, session_id=user.session_id, via="sign-out", own=True
            )
    clear_session_cookie(response, request, settings)
    return response


@router.post("/auth/signup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def signup(body: Signup, door: DoorDep, budgets: BudgetsDep) -> SessionOut:
    """Creates an account with a password and signs the browser in (a session cookie). 403 while
    sign-up is off, 422 with the reason for a weak password, 409 when the email has an account (a probe:
    it spends the address's budget, as a wrong invitation code does)."""
    async with budgets.code():
        signed = await sign_in.signup(door.db, door.audit, door.settings, **body.model_dump())
    return door.signed_in(signed)


@router.post("/auth/setup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def setup(body: SetupIn, door: DoorDep) -> SessionOut:
    """Creates the first administrator (or makes the account with this email one, with this password,
    ending its sessions and keys) and signs the browser in. 410 once the server has an administrator, or
    when the token is not a live one."""
    signed = await recovery.setup(door.db, door.audit, door.settings, **body.model_dump())
    return door.signed_in(signed)


@router.post("/auth/reset/check", dependencies=[SameOrigin])
async def reset_valid(body: ResetCheck, db: DbDep) -> ResetValid:
    """Whether a reset link still works (the app asks before showing the new-password form). A POST, so
    the token is in no URL and no access log."""
    return ResetValid(valid=await recovery.reset_valid(db, token=body.token))


@router.post("/auth/reset", dependencies=[SameOrigin])
async def reset(body: ResetIn, door: DoorDep) -> SessionOut:
    """Sets the account's password with a reset link (once), ends every session and key of the account
    and signs this browser in. 410 when the link is unknown, used or expired; 422 for a weak password (the
    link is not spent); 403 while the account is disabled."""
    signed = await recovery.reset(door.db, door.audit, door.settings, **body.model_dump())
    return door.signed_in(signed)


@router.post("/auth/forgot", status_code=status.HTTP_202_ACCEPTED, dependencies=[SameOrigin])
async def forgot(
    body: Forgot, background: BackgroundTasks, db: DbDep, settings: SettingsDep, audit: AuditDep
) -> Accepted:
    """Mails a reset link to the account's own address, if an account has it: the same answer, in the
    same time, whatever the email. 409 while mail is not set up (PUBLIC_URL and SMTP_HOST)."""
    started = time.monotonic()
    outbox = await recovery.forgot(db, audit, settings, email=body.email)
    background.add_task(outbox.send)
    await asyncio.sleep(max(0.0, FORGOT_ANSWER_S - (time.monotonic() - started)))
    return Accepted(detail=recovery.FORGOT_SENT)

"""Sign-in with a password, the signed-in session, sign-out. A session lives in an HttpOnly cookie
(backend/services/browser_sessions.py); wrong passwords are limited per account (a backoff that never
locks out a class behind one address) and per address (RATE_LIMIT_AUTH_FAILURES, as wrong keys)."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, HTTPException, Request, Response, status
from psycopg import AsyncConnection

from backend.deps import DbDep, SettingsDep, UserDep, get_rate_limiter
from backend.middleware.rate_limits import RateLimited, RateLimiter, note
from backend.schemas.auth import AuthConfig, Login, SessionOut, SessionUser
from backend.services import security_log
from backend.services.browser_sessions import clear_session_cookie, foreign_origin, start_session
from core.accounts.passwords import verify_password_async
from core.store import accounts, sessions

router = APIRouter(prefix="/auth", tags=["sign-in"])
LimiterDep = Annotated[RateLimiter | None, Depends(get_rate_limiter)]
WRONG_CREDENTIALS = "Wrong email or password."


def refuse_foreign_origin(request: Request, settings: SettingsDep) -> None:
    """Sign-in routes set a cookie without one to check: a cross-site post (login CSRF) is refused."""
    if foreign_origin(request, settings):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "Cross-site request refused: its Origin is not this app's."
        )


SameOrigin = Depends(refuse_foreign_origin)


@router.get("/config")
async def auth_config(db: DbDep, settings: SettingsDep) -> AuthConfig:
    async with db.connection() as conn:
        admins = await accounts.count_admins(conn)
    return AuthConfig(
        signup_enabled=settings.accounts.signup_enabled,
        password_min_length=settings.accounts.password_min_length,
        oidc_enabled=settings.oidc.enabled,
        oidc_name=settings.oidc.name if settings.oidc.enabled else None,
        setup_required=admins == 0,
    )


@router.post("/login", dependencies=[SameOrigin])
async def login(
    body: Login, request: Request, response: Response, db: DbDep, settings: SettingsDep, limiter: LimiterDep
) -> SessionOut:
    """Signs the browser in (a session cookie) and returns the account and its CSRF token. 401 for a wrong
    email or password alike; 429 once the account's or the address's failure budget is spent."""
    if limiter is not None:
        blocked = await limiter.auth_blocked(request.scope) or await limiter.login_blocked(body.email)
        if blocked is not None:
            note(request.scope, blocked)
            raise RateLimited(blocked, "Too many failed sign-ins; wait before trying again.")
    async with db.connection() as conn:
        found = await accounts.credentials(conn, email=body.email)
    matched = await verify_password_async(found.password_hash if found else None, body.password)
    if found is None or not matched or found.disabled_at is not None:
        if limiter is not None:
            await limiter.auth_failed(request.scope)
            await limiter.login_failed(body.email)
        if found is not None:
            async with db.connection() as conn:
                await security_log.record(
                    conn,
                    request,
                    action="signin.failed",
                    actor_user_id=None,
                    target_user_id=found.id,
                    details={"via": "password"},
                )
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, WRONG_CREDENTIALS)
    async with db.connection() as conn, conn.transaction():
        new = await start_session(conn, request, response, settings, user_id=found.id, via="password")
        await log_session_created(conn, request, found.id, "password")
        return await session_out(conn, found.id, new.csrf_token, new.session.id)


async def session_out(
    conn: AsyncConnection, user_id: UUID, csrf_token: str, session_id: UUID | None
) -> SessionOut:
    account = await accounts.account(conn, user_id=user_id)
    assert account is not None  # the caller just found or created it
    user = SessionUser(
        id=account.id, email=account.email, display_name=account.display_name, is_admin=account.is_admin
    )
    return SessionOut(user=user, csrf_token=csrf_token, session_id=session_id)


async def log_session_created(conn: AsyncConnection, request: Request, user_id: UUID, via: str) -> None:
    await security_log.record(
        conn,
        request,
        action="session.created",
        actor_user_id=user_id,
        target_user_id=user_id,
        details={"via": via},
    )


@router.get("/session")
async def current_session(db: DbDep, user: UserDep) -> SessionOut:
    """The signed-in account and the session's CSRF token (the app reads it after a reload). With an API
    key: the key's account and an empty token (keys need none)."""
    async with db.connection() as conn:
        return await session_out(conn, user.id, user.csrf_token or "", user.session_id)


@router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
async def logout(request: Request, db: DbDep, settings: SettingsDep, user: UserDep) -> Response:
    """Ends the browser's session (its cookie fails from now on) and clears the cookie."""
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    if user.session_id is not None:
        async with db.connection() as conn, conn.transaction():
            if await sessions.revoke_session(conn, user_id=user.id, session_id=user.session_id):
                await security_log.record(
                    conn,
                    request,
                    action="session.revoked",
                    actor_user_id=user.id,
                    target_user_id=user.id,
                    target_id=user.session_id,
                    details={"via": "sign-out"},
                )
    clear_session_cookie(response, request, settings)
    return response

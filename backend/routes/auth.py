"""Sign-in with a password, the signed-in session, sign-out. A session lives in an HttpOnly cookie
(backend/services/browser_sessions.py); wrong passwords are limited per account (a backoff that never
locks out a class behind one address) and per address (RATE_LIMIT_AUTH_FAILURES, as wrong keys)."""

from fastapi import APIRouter, HTTPException, Request, Response, status

from backend.deps import DbDep, LimiterDep, SameOrigin, SettingsDep, UserDep
from backend.middleware.rate_limits import RateLimited, note
from backend.schemas.auth import AuthConfig, Login, SessionOut
from backend.services import security_log
from backend.services.browser_sessions import clear_session_cookie
from backend.services.sign_in import session_out, sign_in_browser
from core.accounts.passwords import verify_password_async
from core.store import accounts, sessions

router = APIRouter(prefix="/auth", tags=["sign-in"])
WRONG_CREDENTIALS = "Wrong email or password."


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
        return await sign_in_browser(conn, request, response, settings, user_id=found.id, via="password")


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
                await security_log.record_own(
                    conn, request, "session.revoked", user.id, {"via": "sign-out"}, target_id=user.session_id
                )
    clear_session_cookie(response, request, settings)
    return response

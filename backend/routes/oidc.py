"""Sign in with the school's OpenID Connect provider: GET /auth/oidc/login sends the browser to the
provider, GET /auth/oidc/callback brings it back signed in (backend/services/oidc.py). Both answer 404
while OIDC is not configured. Every refusal lands on the app's sign-in page with a short error code; the
reason goes to the log (never a token)."""

import logging
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import RedirectResponse

from backend.deps import ApiResourcesDep, DbDep, SameOrigin, SettingsDep
from backend.middleware.request_context import request_id
from backend.services import oidc
from backend.services.browser_sessions import public_base, start_session
from backend.services.oidc_tokens import OidcRefused
from backend.services.sign_in import log_session_created
from core.observability.jsonlog import log_json
from core.settings import Settings

router = APIRouter(prefix="/auth/oidc", tags=["sign-in"])


def _enabled(settings: Settings) -> None:
    if not settings.oidc.enabled:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Sign-in through a school account is not configured.")


def _redirect_uri(request: Request, settings: Settings) -> str:
    return public_base(request, settings) + "/auth/oidc/callback"


def _secure(request: Request, settings: Settings) -> bool:
    mode = settings.accounts.session_cookie_secure
    return request.url.scheme == "https" if mode == "auto" else mode == "true"


def _refused(request: Request, settings: Settings, refused: OidcRefused) -> RedirectResponse:
    log_json(
        logging.WARNING,
        "oidc_refused",
        request_id=request_id(request),
        code=refused.code,
        reason=refused.reason,
    )
    response = RedirectResponse(f"/app/#/signin?error={quote(refused.code)}", status.HTTP_302_FOUND)
    _clear_flow_cookie(response, request, settings)
    return response


def _clear_flow_cookie(response: RedirectResponse, request: Request, settings: Settings) -> None:
    response.delete_cookie(
        oidc.FLOW_COOKIE,
        path=oidc.FLOW_COOKIE_PATH,
        httponly=True,
        secure=_secure(request, settings),
        samesite="lax",
    )


@router.get("/login", dependencies=[SameOrigin])
async def oidc_login(
    request: Request, db: DbDep, settings: SettingsDep, resources: ApiResourcesDep, next: str | None = None
) -> RedirectResponse:
    """302 to the provider's authorization endpoint; a flow cookie ties the callback to this browser."""
    _enabled(settings)
    try:
        async with db.connection() as conn, conn.transaction():
            started = await oidc.begin(
                conn,
                resources.oidc_providers,
                settings,
                redirect_uri=_redirect_uri(request, settings),
                next_path=next,
            )
    except OidcRefused as refused:
        return _refused(request, settings, refused)
    response = RedirectResponse(started.authorization_url, status.HTTP_302_FOUND)
    # Lax: sent on the provider's top-level redirect back to the callback, not on cross-site subrequests.
    response.set_cookie(
        oidc.FLOW_COOKIE,
        started.browser_secret,
        max_age=oidc.FLOW_SECONDS,
        path=oidc.FLOW_COOKIE_PATH,
        httponly=True,
        secure=_secure(request, settings),
        samesite="lax",
    )
    return response


# No SameOrigin here: the provider's redirect carries its own site as Referer. The flow's state, spent
# once, and the flow cookie's hash are what tie this request to a sign-in this browser started.
@router.get("/callback")
async def oidc_callback(
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    resources: ApiResourcesDep,
    code: str | None = None,
    state: str | None = None,
    error: str | None = None,
) -> RedirectResponse:
    """Signs the browser in and 302s to the flow's next path, or to /app/#/signin?error=CODE."""
    _enabled(settings)
    try:
        async with db.connection() as conn, conn.transaction():
            flow = await oidc.spend_flow(conn, state=state)
        # Checked once the flow is spent for good: a wrong browser burns the state too.
        oidc.check_browser(flow, request.cookies.get(oidc.FLOW_COOKIE))
        if error is not None or not code:
            raise OidcRefused("denied", f"the provider answered {(error or 'without a code')[:64]}")
        redirect_uri = _redirect_uri(request, settings)
        claims = await oidc.claims_for_code(
            resources.oidc_providers, settings, flow, code=code, redirect_uri=redirect_uri
        )
        response = RedirectResponse(oidc.safe_next(flow.next_path), status.HTTP_302_FOUND)
        async with db.connection() as conn, conn.transaction():
            user_id = await oidc.account_for(conn, request, settings, claims)
            await start_session(conn, request, response, settings, user_id=user_id, via="oidc")
            await log_session_created(conn, request, user_id, "oidc")
    except OidcRefused as refused:
        return _refused(request, settings, refused)
    _clear_flow_cookie(response, request, settings)
    return response

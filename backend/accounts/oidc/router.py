"""Sign in with the school's OpenID Connect provider: GET /auth/oidc/login sends the browser to the
provider, GET /auth/oidc/callback brings it back signed in (backend/accounts/oidc/flow.py); with `link=1`
from a signed-in browser (the account screen), the school login is linked to that account instead. Both
answer 404 while OIDC is not configured. Every refusal lands on the app's sign-in page with a short error
code; the reason goes to the log (never a token, code or state)."""

import logging
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import RedirectResponse

from backend.accounts.oidc import flow as oidc
from backend.accounts.oidc.tokens import OidcRefused
from backend.accounts.service.sign_in import start
from backend.deps import ApiResourcesDep, DbDep, SameOrigin, SettingsDep, browser_user
from backend.middleware.request_context import request_id
from backend.web.audit import AuditDep
from backend.web.browser import public_base, secure_cookies, set_session_cookie
from core.observability.jsonlog import log_json
from core.settings import Settings

router = APIRouter(prefix="/auth/oidc", tags=["sign-in"])
LINKED_NEXT = "/app/#/account"


def _enabled(settings: Settings) -> None:
    if not settings.oidc.enabled:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Sign-in through a school account is not configured.")


def _redirect_uri(request: Request, settings: Settings) -> str:
    return public_base(request, settings) + "/auth/oidc/callback"


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
        secure=secure_cookies(request, settings),
        samesite="lax",
    )


@router.get("/login", dependencies=[SameOrigin])
async def oidc_login(
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    resources: ApiResourcesDep,
    next: str | None = None,
    link: bool = False,
) -> RedirectResponse:
    """302 to the provider's authorization endpoint; a flow cookie ties the callback to this browser.
    `link=1`: the browser's signed-in account gets the school login linked (401 without a session)."""
    _enabled(settings)
    link_user = await browser_user(request, db) if link else None
    if link and link_user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "Sign in first, then link your school login.")
    try:
        async with db.connection() as conn, conn.transaction():
            started = await oidc.begin(
                conn,
                resources.oidc_providers,
                settings,
                redirect_uri=_redirect_uri(request, settings),
                next_path=LINKED_NEXT if link_user else next,
                link_user_id=link_user.id if link_user else None,
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
        secure=secure_cookies(request, settings),
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
    audit: AuditDep,
    code: str | None = None,
    state: str | None = None,
    error: str | None = None,
) -> RedirectResponse:
    """Signs the browser in (or links the school login to its account) and 302s to the flow's next
    path, or to /app/#/signin?error=CODE."""
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
            user_id = await oidc.account_for(conn, audit, settings, claims, link_user_id=flow.link_user_id)
            if flow.link_user_id is None:  # a linking browser is signed in already
                signed = await start(conn, audit, settings, user_id=user_id, via="oidc")
                set_session_cookie(response, request, settings, signed.token)
    except OidcRefused as refused:
        return _refused(request, settings, refused)
    _clear_flow_cookie(response, request, settings)
    return response

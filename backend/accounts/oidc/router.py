"""Sign in with the school's OpenID Connect provider: GET /auth/oidc/login sends the browser to the
provider, GET /auth/oidc/callback brings it back signed in (backend/accounts/oidc/flow.py); POST
/auth/oidc/link (the account screen, signed in, with its CSRF token) starts the same flow to link the
school login to that account instead. Each answers 404 while OIDC is not configured. Every refusal lands
on the app's sign-in page with a short error code; the reason goes to the log (never a token, code or
state)."""

from urllib.parse import quote
from uuid import UUID

from fastapi import APIRouter, HTTPException, Request, Response, status
from fastapi.responses import RedirectResponse

from backend.accounts.oidc import flow as oidc
from backend.accounts.oidc.tokens import OidcRefused
from backend.accounts.schemas import LinkStarted
from backend.deps import ApiResourcesDep, DbDep, SameOrigin, SettingsDep, UserDep
from backend.middleware.request_context import log_warning
from backend.web.audit import AuditDep
from backend.web.browser import public_base, secure_cookies, set_session_cookie
from core.settings import Settings

router = APIRouter(prefix="/auth/oidc", tags=["sign-in"])
LINKED_NEXT = "/app/#/account"


def _enabled(settings: Settings) -> None:
    if not settings.oidc.enabled:
        raise HTTPException(status.HTTP_404_NOT_FOUND, "Sign-in through a school account is not configured.")


def _redirect_uri(request: Request, settings: Settings) -> str:
    return public_base(request, settings) + "/auth/oidc/callback"


def _refused(request: Request, settings: Settings, refused: OidcRefused) -> RedirectResponse:
    log_warning(request, "oidc_refused", code=refused.code, reason=refused.reason)
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
    request: Request, db: DbDep, settings: SettingsDep, resources: ApiResourcesDep, next: str | None = None
) -> RedirectResponse:
    """302 to the provider's authorization endpoint; a flow cookie ties the callback to this browser."""
    _enabled(settings)
    try:
        started = await _begin(db, resources, request, settings, next_path=next, link_user_id=None)
    except OidcRefused as refused:
        return _refused(request, settings, refused)
    response = RedirectResponse(started.authorization_url, status.HTTP_302_FOUND)
    _set_flow_cookie(response, request, settings, started)
    return response


@router.post("/link")
async def oidc_link(
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    resources: ApiResourcesDep,
    user: UserDep,
) -> LinkStarted:
    """From the account screen: where to send this browser so that the school login it comes back with
    is linked to the signed-in account (proof of both: this session, with its CSRF token, and the
    school's). A browser session only (403 with an API key); the callback lands on the account screen."""
    _enabled(settings)
    if user.session_id is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Link your school login from the app, signed in.")
    try:
        started = await _begin(db, resources, request, settings, next_path=LINKED_NEXT, link_user_id=user.id)
    except OidcRefused as refused:
        raise HTTPException(
            status.HTTP_502_BAD_GATEWAY, "The school's sign-in cannot be reached now."
        ) from refused
    _set_flow_cookie(response, request, settings, started)
    return LinkStarted(url=started.authorization_url)


async def _begin(
    db: DbDep,
    resources: ApiResourcesDep,
    request: Request,
    settings: Settings,
    *,
    next_path: str | None,
    link_user_id: UUID | None,
) -> oidc.LoginStarted:
    uri, providers = _redirect_uri(request, settings), resources.oidc_providers
    return await oidc.begin(
        db, providers, settings, redirect_uri=uri, next_path=next_path, link_user_id=link_user_id
    )


def _set_flow_cookie(
    response: Response, request: Request, settings: Settings, started: oidc.LoginStarted
) -> None:
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
    callback = oidc.Callback(state, code, error, request.cookies.get(oidc.FLOW_COOKIE))
    uri, providers = _redirect_uri(request, settings), resources.oidc_providers
    try:
        finished = await oidc.finish(db, audit, settings, providers, callback=callback, redirect_uri=uri)
    except OidcRefused as refused:
        return _refused(request, settings, refused)
    response = RedirectResponse(finished.next_path, status.HTTP_302_FOUND)
    if finished.signed is not None:
        set_session_cookie(response, request, settings, finished.signed[0].token)
    _clear_flow_cookie(response, request, settings)
    return response

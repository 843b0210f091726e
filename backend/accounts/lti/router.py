"""LTI 1.3 resource-link launches from an LMS (backend/accounts/lti/): the login initiation, the launch,
the one-time ticket that signs the app's own window in once the person confirms who they continue as,
and what an LMS is configured with (the tool's URLs and public keys). The platforms themselves:
backend/accounts/lti/admin_router.py, included here."""

from urllib.parse import urlsplit

from fastapi import APIRouter, HTTPException, Request, status
from starlette.responses import HTMLResponse, RedirectResponse, Response

from backend.accounts.lti import admin_router, service
from backend.accounts.lti.launch import LaunchRefused
from backend.accounts.lti.login import LoginRefused, LoginRequest
from backend.accounts.lti.pages import confirm_page, frame_ancestors, launch_page, refusal_page
from backend.accounts.lti.people import SYNTHETIC_DOMAIN
from backend.accounts.lti.schemas import ToolConfig
from backend.deps import ApiResourcesDep, DbDep, SameOrigin, SettingsDep
from backend.middleware.request_context import log_warning
from backend.web.audit import AuditDep
from backend.web.browser import public_base, set_session_cookie

router = APIRouter(tags=["lti"])
router.include_router(admin_router.router)


async def _params(request: Request) -> dict[str, str]:
    """A login initiation's parameters: the query's (GET) or the form's (POST), text values only."""
    values = dict(request.query_params)
    if request.method == "POST":
        values |= {key: value for key, value in (await request.form()).items() if isinstance(value, str)}
    return values


# GET and POST alike (platforms send either); two registrations so each has its own OpenAPI operation id.
@router.get("/lti/login", response_class=RedirectResponse, operation_id="lti_login_get")
@router.post("/lti/login", response_class=RedirectResponse, operation_id="lti_login_post")
async def lti_login(request: Request, db: DbDep, settings: SettingsDep) -> RedirectResponse:
    """The LMS's third-party-initiated login: 302 to its authorization endpoint with a new state and
    nonce (kept server-side); 400 with the reason for an unknown platform or deployment."""
    given = await _params(request)
    login = LoginRequest(**{key: given.get(key) for key in LoginRequest.__dataclass_fields__})
    try:
        url = await service.login_redirect(
            db, login, launch_url=public_base(request, settings) + "/lti/launch"
        )
    except LoginRefused as refused:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"LTI login refused: {refused}") from None
    return RedirectResponse(url, status_code=status.HTTP_302_FOUND, headers={"Cache-Control": "no-store"})


@router.post("/lti/launch", response_class=HTMLResponse)
async def lti_launch(
    request: Request, db: DbDep, settings: SettingsDep, resources: ApiResourcesDep, audit: AuditDep
) -> HTMLResponse:
    """The platform's form post (id_token, state). Checks everything (launch.py), then the page that opens
    the course's project in a window of the app's own. Refusals are pages too, with their reason."""
    form = await request.form()
    id_token, state, error = form.get("id_token"), form.get("state"), form.get("error")
    try:
        if isinstance(error, str):
            raise LaunchRefused(
                f"the platform answered: {error} {form.get('error_description') or ''}".strip()
            )
        if not isinstance(id_token, str) or not isinstance(state, str):
            raise LaunchRefused("a launch needs id_token and state")
        launched = await service.launch(db, audit, resources.lti, id_token=id_token, state=state)
    except LaunchRefused as refused:
        log_warning(request, "lti_refused", reason=refused.reason, detail=refused.detail)
        return refusal_page(refused.reason, refused.status, frame_ancestors(refused.platform))
    ticket_url = f"{public_base(request, settings)}/auth/ticket/{launched.opened.ticket}"
    checked = launched.launch
    return launch_page(
        ticket_url, launched.project_name, frame_ancestors(checked.platform, checked.return_url)
    )


TICKET_GONE = "This link has expired or was used already: open studyAI again from your course."


def _ticket_gone() -> HTMLResponse:
    return refusal_page(TICKET_GONE, status.HTTP_400_BAD_REQUEST, "'none'")


@router.get("/auth/ticket/{ticket}", response_class=HTMLResponse)
async def open_ticket(ticket: str, db: DbDep) -> Response:
    """A launch's one-time ticket (two minutes): a page asking "Continue as NAME (EMAIL)?" whose button
    signs this top-level window in (POST /auth/ticket). Nothing changes until the person clicks: a
    launch captured and replayed in another browser cannot switch it to the launching identity."""
    account = await service.ticket_holder(db, ticket=ticket)
    if account is None:
        return _ticket_gone()
    # An account made for a launch without an email has a placeholder address: not worth showing.
    email = None if account.email.endswith(SYNTHETIC_DOMAIN) else account.email
    return confirm_page(ticket, account.display_name or account.email, email)


@router.post("/auth/ticket", response_class=RedirectResponse, dependencies=[SameOrigin])
async def use_ticket(request: Request, db: DbDep, settings: SettingsDep, audit: AuditDep) -> Response:
    """The "Continue" of the ticket's page (its form field `ticket`): spends the ticket, signs this
    browser in and 303s to the project. Same-origin only: another site cannot post it."""
    ticket = (await request.form()).get("ticket")
    if not isinstance(ticket, str) or not ticket:
        return _ticket_gone()
    used = await service.use_ticket(db, audit, settings, ticket=ticket)
    if used is None:
        return _ticket_gone()
    signed, next_path = used
    redirect = RedirectResponse(own_path(next_path), status_code=status.HTTP_303_SEE_OTHER)
    set_session_cookie(redirect, request, settings, signed[0].token)
    redirect.headers["Cache-Control"] = "no-store"
    return redirect


def own_path(path: str) -> str:
    """Only a path on this app (the store writes /app/#/projects/<id>): never another site."""
    parts = urlsplit(path)
    return path if path.startswith("/") and not path.startswith("//") and not parts.netloc else "/app/"


@router.get("/lti/config")
async def lti_config(request: Request, settings: SettingsDep) -> ToolConfig:
    """The tool's URLs to register it in an LMS (public)."""
    base = public_base(request, settings)
    return ToolConfig(
        title="studyAI",
        login_initiation_url=f"{base}/lti/login",
        redirect_uris=[f"{base}/lti/launch"],
        target_link_uri=f"{base}/lti/launch",
        jwks_url=f"{base}/lti/jwks",
        domain=urlsplit(base).netloc,
    )


@router.get("/lti/jwks")
async def lti_jwks(resources: ApiResourcesDep) -> dict[str, list[dict[str, object]]]:
    """The tool's public key set (RS256): LMSs ask for it at registration."""
    return await resources.lti.public_jwks()

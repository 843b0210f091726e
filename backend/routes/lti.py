"""LTI 1.3 resource-link launches from an LMS (backend/services/lti/): the login initiation, the launch,
the one-time ticket that signs the app's own window in, and what an LMS is configured with (the tool's
URLs and public keys). The platforms themselves: backend/routes/lti_admin.py, included here."""

from urllib.parse import urlsplit

from fastapi import APIRouter, HTTPException, Request, status
from starlette.responses import HTMLResponse, RedirectResponse, Response

from backend.deps import ApiResourcesDep, DbDep, SettingsDep
from backend.routes import lti_admin
from backend.schemas.lti import ToolConfig
from backend.services.browser_sessions import public_base, start_session
from backend.services.lti.launch import LaunchRefused, record_nonce, spend_flow, verify
from backend.services.lti.login import LoginRefused, LoginRequest, start_login
from backend.services.lti.pages import frame_ancestors, launch_page, refusal_page
from backend.services.lti.people import open_launch
from backend.services.sign_in import log_session_created
from core.store import accounts, projects
from core.store import lti as lti_store

router = APIRouter(tags=["lti"])
router.include_router(lti_admin.router)


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
        async with db.connection() as conn:
            url = await start_login(conn, login, launch_url=public_base(request, settings) + "/lti/launch")
    except LoginRefused as refused:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"LTI login refused: {refused}") from None
    return RedirectResponse(url, status_code=status.HTTP_302_FOUND, headers={"Cache-Control": "no-store"})


@router.post("/lti/launch", response_class=HTMLResponse)
async def lti_launch(
    request: Request, db: DbDep, settings: SettingsDep, resources: ApiResourcesDep
) -> HTMLResponse:
    """The platform's form post (id_token, state). Checks everything (launch.py), then the page that opens
    the course's project in a window of the app's own. Refusals are pages too, with their reason."""
    form = await request.form()
    id_token, state, error = form.get("id_token"), form.get("state"), form.get("error")
    platform = None
    try:
        if isinstance(error, str):
            raise LaunchRefused(
                f"the platform answered: {error} {form.get('error_description') or ''}".strip()
            )
        if not isinstance(id_token, str) or not isinstance(state, str):
            raise LaunchRefused("a launch needs id_token and state")
        async with db.connection() as conn:
            flow, platform = await spend_flow(conn, state)
        launch = await verify(id_token, flow, platform, resources.lti)  # may fetch keys: no connection held
        async with db.connection() as conn:
            await record_nonce(conn, launch)
            opened = await open_launch(conn, request, launch)
            project = await projects.get_project(conn, project_id=opened.project_id, user_id=opened.user_id)
    except LaunchRefused as refused:
        ancestors = frame_ancestors(refused.platform or platform)
        return refusal_page(refused.reason, refused.status, ancestors)
    ticket_url = f"{public_base(request, settings)}/auth/ticket/{opened.ticket}"
    name = project.name if project is not None else "studyAI"
    return launch_page(ticket_url, name, frame_ancestors(launch.platform, launch.return_url))


@router.get("/auth/ticket/{ticket}", response_class=RedirectResponse)
async def open_ticket(ticket: str, request: Request, db: DbDep, settings: SettingsDep) -> Response:
    """A launch's one-time ticket (two minutes): signs this top-level window in (first-party, so the Lax
    cookie holds) and goes to the project. No Origin check: the window opens from the LMS's page, whose
    Referer is foreign by design; the ticket itself is the proof, single use and short-lived."""
    async with db.connection() as conn, conn.transaction():
        spent = await lti_store.spend_ticket(conn, ticket=ticket)
        account = await accounts.account(conn, user_id=spent.user_id) if spent is not None else None
        if spent is None or account is None or account.disabled_at is not None:
            return refusal_page(
                "This link has expired or was used already: open studyAI again from your course.",
                status.HTTP_400_BAD_REQUEST,
                "'none'",
            )
        redirect = RedirectResponse(_own_path(spent.next_path), status_code=status.HTTP_302_FOUND)
        await start_session(conn, request, redirect, settings, user_id=account.id, via="lti")
        await log_session_created(conn, request, account.id, "lti")
    redirect.headers["Cache-Control"] = "no-store"
    return redirect


def _own_path(path: str) -> str:
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
    return resources.lti.public_jwks()

"""The web app's sign-in: a session in an HttpOnly, SameSite=Lax cookie (Secure over TLS), and the checks
that make a cookie-authenticated write safe: the session's CSRF token in X-CSRF-Token, and an Origin, when
the browser sends one, equal to the app's own. Requests with an API key (Authorization: Bearer) are not
cookie-based: none of this applies to them."""

from uuid import UUID

from psycopg import AsyncConnection
from starlette.requests import Request
from starlette.responses import Response

from core.accounts.secrets import same
from core.settings import Settings
from core.store import sessions
from core.store.sessions import NewSession, SessionHolder

SESSION_COOKIE = "studyai_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def own_origin(request: Request, settings: Settings) -> str:
    """scheme://host[:port] the app is served at: PUBLIC_URL's, else the request's own."""
    if settings.accounts.public_url:
        scheme, _, rest = settings.accounts.public_url.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}".lower()
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}".lower()


def public_base(request: Request, settings: Settings) -> str:
    """The app's base URL for links people are sent (join, reset) and callbacks (OIDC, LTI)."""
    return settings.accounts.public_url or str(request.base_url).rstrip("/")


def foreign_origin(request: Request, settings: Settings) -> bool:
    """Whether the request carries an Origin (or, without one, a Referer) from another site."""
    origin = request.headers.get("origin")
    if origin is None:
        referer = request.headers.get("referer")
        if not referer:
            return False
        scheme, _, rest = referer.partition("://")
        origin = f"{scheme}://{rest.split('/', 1)[0]}"
    return origin.lower() != own_origin(request, settings)


def csrf_refusal(request: Request, holder: SessionHolder, settings: Settings) -> str | None:
    """Why a cookie-authenticated request may not change anything (None: it may)."""
    if request.method in SAFE_METHODS:
        return None
    if foreign_origin(request, settings):
        return "Cross-site request refused: its Origin is not this app's."
    sent = request.headers.get(CSRF_HEADER)
    if not sent or not same(sent, holder.csrf_token):
        return f"Missing or wrong {CSRF_HEADER}: reload the app and try again."
    return None


def _secure(request: Request, settings: Settings) -> bool:
    mode = settings.accounts.session_cookie_secure
    return request.url.scheme == "https" if mode == "auto" else mode == "true"


def set_session_cookie(response: Response, request: Request, settings: Settings, new: NewSession) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        new.token,
        max_age=settings.accounts.session_max_days * 86400,
        path="/",
        httponly=True,
        secure=_secure(request, settings),
        samesite="lax",
    )


def clear_session_cookie(response: Response, request: Request, settings: Settings) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, secure=_secure(request, settings), samesite="lax"
    )


async def start_session(
    conn: AsyncConnection,
    request: Request,
    response: Response,
    settings: Settings,
    *,
    user_id: UUID,
    via: str,
) -> NewSession:
    """Signs the browser in as user_id: a new session row, its cookie on `response`. The caller logs the
    `session.created` event in the same transaction (backend/services/security_log.py)."""
    new = await sessions.create_session(
        conn,
        user_id=user_id,
        via=via,
        max_days=settings.accounts.session_max_days,
        user_agent=request.headers.get("user-agent"),
        address=request.client.host if request.client else None,
    )
    set_session_cookie(response, request, settings, new)
    return new

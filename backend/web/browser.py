"""The web app's rules in a browser: a session in an HttpOnly, SameSite=Lax cookie, and the checks that
make a cookie-authenticated write safe (the session's CSRF token in X-CSRF-Token, and an Origin, when the
browser sends one, equal to the app's own). With an https PUBLIC_URL the cookie is `__Host-` prefixed and
always Secure, and every answer carries Strict-Transport-Security. Requests with an API key
(Authorization: Bearer) are not cookie-based: none of this applies to them."""

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.accounts.secrets import same
from core.settings import Settings
from core.store.accounts.sessions import SessionHolder

COOKIE = "studyai_session"
# A __Host- cookie must be Secure, on path /, with no Domain: no sibling host or plain-http page can set
# or shadow it (RFC 6265bis §4.1.3.2).
HOST_COOKIE = "__Host-studyai_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HSTS = "max-age=31536000"  # a year; no includeSubDomains: the school's other hosts are not ours to bind


def session_cookie(settings: Settings) -> str:
    return HOST_COOKIE if settings.accounts.public_https else COOKIE


def session_token(request: Request, settings: Settings) -> str | None:
    return request.cookies.get(session_cookie(settings))


def own_origin(request: Request, settings: Settings) -> str:
    """scheme://host[:port] the app is served at: PUBLIC_URL's, else the request's own."""
    if settings.accounts.public_url:
        scheme, _, rest = settings.accounts.public_url.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}".lower()
    return f"{request.url.scheme}://{request.headers.get('host', request.url.netloc)}".lower()


def public_base(request: Request, settings: Settings) -> str:
    """The app's base URL for links shown in the app and for callbacks (OIDC, LTI). Links that are
    mailed use PUBLIC_URL only (`mail_base`): a request's Host header is the sender's to choose."""
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


def secure_cookies(request: Request, settings: Settings) -> bool:
    """Whether cookies are Secure: an https PUBLIC_URL decides (behind a proxy the request's own scheme
    may read http); without one, SESSION_COOKIE_SECURE (auto: the request's scheme)."""
    if settings.accounts.public_https:
        return True
    mode = settings.accounts.session_cookie_secure
    return request.url.scheme == "https" if mode == "auto" else mode == "true"


def set_session_cookie(response: Response, request: Request, settings: Settings, token: str) -> None:
    response.set_cookie(
        session_cookie(settings),
        token,
        max_age=settings.accounts.session_max_days * 86400,
        path="/",
        httponly=True,
        secure=secure_cookies(request, settings),
        samesite="lax",
    )


def clear_session_cookie(response: Response, request: Request, settings: Settings) -> None:
    response.delete_cookie(
        session_cookie(settings),
        path="/",
        httponly=True,
        secure=secure_cookies(request, settings),
        samesite="lax",
    )


class StrictTransportMiddleware:
    """Strict-Transport-Security on every answer when `https` (the app's PUBLIC_URL is https)."""

    def __init__(self, app: ASGIApp, https: bool) -> None:
        self.app = app
        self.header = (b"strict-transport-security", HSTS.encode())
        self.https = https

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.https:
            await self.app(scope, receive, send)
            return

        async def send_with_hsts(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, send_with_hsts)

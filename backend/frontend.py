"""The web frontend (frontend/): static files served at /app by the API itself, so the app and the API
share one origin (no CORS) and `make install` stays pip-only. The app talks to the API only through its
public routes; nothing here adds an API route.

Every /app response carries a strict Content-Security-Policy (scripts, styles and connections from this
origin only; no inline script or style element; no frames, objects or plugins) and the usual hardening
headers. Files are gzipped on the way out when the client accepts it, and revalidated by ETag on each
load (`no-cache`): file names carry no content hash, so a cached copy must never outlive a release."""

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.middleware.gzip import GZipMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRONTEND_DIR = Path(__file__).resolve().parents[1] / "frontend"
MOUNT_PATH = "/app"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        # blob: a page image of a cited document (screens/viewer.js), fetched with the app's credentials
        # (an API key cannot ride on an <img>'s own request) and shown from memory.
        "img-src 'self' data: blob:",
        "font-src 'self'",
        # An audio overview's recording (screens/audio.js), fetched with the app's credentials (as the page
        # images above) and played from memory.
        "media-src 'self' blob:",
        "connect-src 'self'",
        # pdf.js's worker (vendor/pdfjs/pdf.worker.min.mjs), a module from this origin: said outright rather
        # than left to script-src by fallback, which a browser that falls back to default-src would refuse.
        "worker-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
    )
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
    "cache-control": "no-cache",
}


class SecurityHeaders:
    """Sets the headers above on every response of the wrapped app (replacing any of the same name)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._headers = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        names = {name for name, _ in self._headers}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message["headers"] = [*kept, *self._headers]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def frontend_app(directory: Path = FRONTEND_DIR) -> ASGIApp:
    """frontend/ as static files (index.html for the folder), gzipped, with the security headers."""
    files = StaticFiles(directory=directory, html=True)
    return SecurityHeaders(GZipMiddleware(files, minimum_size=500, compresslevel=6))


def add_frontend(app: FastAPI, directory: Path = FRONTEND_DIR) -> None:
    """Mounts the app at /app (outside the OpenAPI schema: it is not part of the API) and sends / there."""
    if not (directory / "index.html").is_file():  # an install without the frontend: the API alone
        return
    app.mount(MOUNT_PATH, frontend_app(directory), name="frontend")

    @app.get("/", include_in_schema=False)
    async def to_frontend() -> RedirectResponse:
        return RedirectResponse(f"{MOUNT_PATH}/")

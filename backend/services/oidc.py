"""Sign-in through the school's OpenID Connect provider: the authorization-code flow with PKCE (S256),
`state` and `nonce`, kept server-side (core/store/auth_flows.py) and bound to the browser that started it
by a short-lived HttpOnly cookie whose sha256 the flow holds; then the ID token's checks
(backend/services/oidc_tokens.py) and the account it signs in (an identity, else a verified email)."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.httpx_client import AsyncOAuth2Client
from fastapi import Request
from psycopg import AsyncConnection

from backend.services import security_log
from backend.services.oidc_provider import OidcProviders, ProviderMetadata, ProviderUnreachable
from backend.services.oidc_tokens import OidcRefused, verify_from_provider
from core.accounts.secrets import new_token, same, token_hash
from core.settings import Settings
from core.store import accounts, auth_flows, identities

FLOW_COOKIE = "studyai_oidc"
FLOW_COOKIE_PATH = "/auth/oidc"
FLOW_SECONDS = auth_flows.FLOW_MINUTES * 60
DEFAULT_NEXT = "/app/"
MAX_NEXT = 512
TOKEN_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class LoginStarted:
    authorization_url: str
    browser_secret: str  # the flow cookie's value; only its sha256 is stored


def safe_next(next_path: str | None) -> str:
    """Where to land after signing in: a path of the app itself (/app...), never another site."""
    if not next_path or len(next_path) > MAX_NEXT or not next_path.startswith("/app"):
        return DEFAULT_NEXT
    if "\\" in next_path or any(ord(c) < 0x20 or ord(c) == 0x7F for c in next_path):
        return DEFAULT_NEXT
    parts = urlsplit(next_path)
    return next_path if not parts.scheme and not parts.netloc else DEFAULT_NEXT


def _client(settings: Settings, redirect_uri: str) -> AsyncOAuth2Client:
    return AsyncOAuth2Client(
        client_id=settings.oidc.client_id,
        client_secret=settings.oidc.client_secret,
        scope=settings.oidc.scopes,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        timeout=TOKEN_TIMEOUT,
    )


async def _metadata(providers: OidcProviders, issuer: str) -> ProviderMetadata:
    try:
        return await providers.metadata(issuer)
    except ProviderUnreachable as error:
        raise OidcRefused("provider_unreachable", str(error)) from error


async def begin(
    conn: AsyncConnection,
    providers: OidcProviders,
    settings: Settings,
    *,
    redirect_uri: str,
    next_path: str | None,
) -> LoginStarted:
    """Stores a new flow and returns the provider's authorization URL for it."""
    assert settings.oidc.issuer is not None  # the route answers 404 while OIDC is off
    metadata = await _metadata(providers, settings.oidc.issuer)
    state, nonce, verifier, browser = new_token(), new_token(), new_token(48), new_token()
    await auth_flows.start(
        conn,
        state=state,
        kind="oidc",
        nonce=nonce,
        code_verifier=verifier,
        browser_hash=token_hash(browser),
        next_path=safe_next(next_path),
    )
    async with _client(settings, redirect_uri) as client:
        url, _ = client.create_authorization_url(
            metadata.authorization_endpoint, state=state, code_verifier=verifier, nonce=nonce
        )
    return LoginStarted(url, browser)


async def spend_flow(conn: AsyncConnection, *, state: str | None) -> auth_flows.AuthFlow:
    """The flow `state` names, spent (single use: a replayed callback finds nothing)."""
    flow = await auth_flows.spend(conn, state=state, kind="oidc") if state else None
    if flow is None:
        raise OidcRefused("expired", "unknown, used or expired state")
    return flow


def check_browser(flow: auth_flows.AuthFlow, browser_secret: str | None) -> None:
    """The callback comes from the browser that started the flow: its flow cookie hashes to the flow's."""
    if not browser_secret or not flow.browser_hash or not same(token_hash(browser_secret), flow.browser_hash):
        raise OidcRefused("wrong_browser", "the flow cookie is missing or belongs to another sign-in")


async def claims_for_code(
    providers: OidcProviders, settings: Settings, flow: auth_flows.AuthFlow, *, code: str, redirect_uri: str
) -> dict[str, Any]:
    """Exchanges the code (with the flow's PKCE verifier) and returns the verified ID token's claims."""
    assert settings.oidc.issuer is not None and settings.oidc.client_id is not None
    metadata = await _metadata(providers, settings.oidc.issuer)
    try:
        async with _client(settings, redirect_uri) as client:
            tokens = await client.fetch_token(
                metadata.token_endpoint,
                code=code,
                code_verifier=flow.code_verifier,
                redirect_uri=redirect_uri,
            )
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as error:
        raise OidcRefused(
            "token_exchange", f"the provider refused the code ({type(error).__name__})"
        ) from error
    id_token = tokens.get("id_token")
    if not isinstance(id_token, str):
        raise OidcRefused("no_id_token", "the provider's token response has no ID token")
    try:
        return await verify_from_provider(
            providers,
            id_token,
            issuer=settings.oidc.issuer,
            client_id=settings.oidc.client_id,
            nonce=flow.nonce,
        )
    except ProviderUnreachable as error:
        raise OidcRefused("provider_unreachable", str(error)) from error


def _email_verified(claims: dict[str, Any]) -> bool:
    # Some providers send the boolean as a string. Microsoft Entra ID sends no email_verified; its optional
    # claim xms_edov says the email's domain is verified as the tenant's own (README, "Sign in with...").
    return any(claims.get(name) in (True, "true") for name in ("email_verified", "xms_edov"))


async def account_for(
    conn: AsyncConnection, request: Request, settings: Settings, claims: dict[str, Any]
) -> UUID:
    """The account these (verified) claims sign in: the one linked to (iss, sub); else, for an email the
    provider vouches for in an allowed domain, the account with that email or a new one, linked now."""
    issuer, subject = str(claims["iss"]), str(claims["sub"])
    found = await identities.find(conn, kind="oidc", issuer=issuer, subject=subject)
    if found is not None:
        user_id = found.user_id
    else:
        user_id = await _link_by_email(conn, request, settings, claims, issuer, subject)
    account = await accounts.account(conn, user_id=user_id)
    if account is None or account.disabled_at is not None:
        raise OidcRefused("disabled", "the account is disabled")
    return user_id


async def _link_by_email(
    conn: AsyncConnection,
    request: Request,
    settings: Settings,
    claims: dict[str, Any],
    issuer: str,
    subject: str,
) -> UUID:
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise OidcRefused("no_email", "the provider sent no email address")
    if not _email_verified(claims):
        raise OidcRefused("unverified_email", "your school did not confirm this email")
    email = email.strip().lower()
    domains = settings.oidc.domains
    if domains and email.rpartition("@")[2] not in domains:
        raise OidcRefused("domain_not_allowed", "the email's domain is not allowed to sign in")
    existing = await accounts.account_by_email(conn, email=email)
    if existing is None:
        name = claims.get("name")
        created = await accounts.create_account(
            conn, email=email, display_name=name if isinstance(name, str) and name.strip() else None
        )
        existing = created or await accounts.account_by_email(conn, email=email)  # a concurrent sign-up
        assert existing is not None
        if created is not None:
            await security_log.record_own(conn, request, "user.created", created.id, {"via": "oidc"})
    if existing.disabled_at is not None:
        raise OidcRefused("disabled", "the account is disabled")
    linked = await identities.link(
        conn, user_id=existing.id, kind="oidc", issuer=issuer, subject=subject, email=email
    )
    await security_log.record(
        conn,
        request,
        action="identity.linked",
        actor_user_id=existing.id,
        target_user_id=existing.id,
        target_id=str(linked.id),
        details={"kind": "oidc", "issuer": issuer},
    )
    return existing.id

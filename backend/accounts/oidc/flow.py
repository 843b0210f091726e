"""Sign-in through the school's OpenID Connect provider: the authorization-code flow with PKCE (S256),
`state` and `nonce`, kept server-side (core/store/accounts/auth_flows.py) and bound to the browser that
started it by a short-lived HttpOnly cookie whose sha256 the flow holds; then the ID token's checks
(backend/accounts/oidc/tokens.py) and the account it signs in (an identity, else a verified email, or
the signed-in account that started the flow to link its school login)."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import httpx
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.httpx_client import AsyncOAuth2Client

from backend.accounts.errors import EmailTaken
from backend.accounts.oidc.provider import OidcProviders, ProviderMetadata, ProviderUnreachable
from backend.accounts.oidc.tokens import OidcRefused, verify_from_provider
from backend.accounts.service import credentials, people
from backend.accounts.service.people import Person
from backend.accounts.service.sign_in import SignedIn, start
from core.accounts.emails import NotAnEmail, normalize_email
from core.accounts.secrets import new_token, same, token_hash
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, auth_flows, identities
from core.store.accounts.auth_flows import AuthFlow
from core.store.sql.access import Connection
from core.store.sql.pool import Database

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
    db: Database,
    providers: OidcProviders,
    settings: Settings,
    *,
    redirect_uri: str,
    next_path: str | None,
    link_user_id: UUID | None = None,
) -> LoginStarted:
    """Stores a new flow and returns the provider's authorization URL for it (`link_user_id`: the
    signed-in account the login will be linked to). The provider's metadata may be fetched first: no
    connection is held meanwhile."""
    assert settings.oidc.issuer is not None  # the route answers 404 while OIDC is off
    metadata = await _metadata(providers, settings.oidc.issuer)
    state, nonce, verifier, browser = new_token(), new_token(), new_token(48), new_token()
    after, browser_hash = safe_next(next_path), token_hash(browser)
    async with db.connection() as conn, conn.transaction():
        flow = AuthFlow(
            state, "oidc", nonce, verifier, browser_hash, next_path=after, link_user_id=link_user_id
        )
        await auth_flows.start(conn, flow)
    async with _client(settings, redirect_uri) as client:
        url, _ = client.create_authorization_url(
            metadata.authorization_endpoint, state=state, code_verifier=verifier, nonce=nonce
        )
    return LoginStarted(url, browser)


@dataclass(frozen=True, slots=True)
class Callback:
    """What the provider's redirect carries back, and the browser's flow cookie."""

    state: str | None
    code: str | None
    error: str | None
    browser_secret: str | None


@dataclass(frozen=True, slots=True)
class Finished:
    """A callback's outcome: the account, a new browser session (None when the flow linked the school
    login to a browser signed in already), and where the browser goes."""

    user_id: UUID
    signed: SignedIn | None
    next_path: str


async def finish(
    db: Database,
    audit: Audit,
    settings: Settings,
    providers: OidcProviders,
    *,
    callback: Callback,
    redirect_uri: str,
) -> Finished:
    """The provider's answer to a flow: the state spent once (a wrong browser burns it too), the code
    exchanged and the ID token checked, then the account it signs in or links; OidcRefused otherwise."""
    async with db.connection() as conn, conn.transaction():
        flow = await spend_flow(conn, state=callback.state)
    check_browser(flow, callback.browser_secret)
    if callback.error is not None or not callback.code:
        raise OidcRefused("denied", f"the provider answered {(callback.error or 'without a code')[:64]}")
    claims = await claims_for_code(providers, settings, flow, code=callback.code, redirect_uri=redirect_uri)
    async with db.connection() as conn, conn.transaction():
        user_id = await account_for(conn, audit, settings, claims, link_user_id=flow.link_user_id)
        linking = flow.link_user_id is not None  # that browser is signed in already
        signed = None if linking else await start(conn, audit, settings, user_id=user_id, via="oidc")
    return Finished(user_id, signed, safe_next(flow.next_path))


async def spend_flow(conn: Connection, *, state: str | None) -> auth_flows.AuthFlow:
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
    conn: Connection, audit: Audit, settings: Settings, claims: dict[str, Any], *, link_user_id: UUID | None
) -> UUID:
    """The account these (verified) claims sign in.

    - From the account screen (`link_user_id`: the flow was started by that signed-in browser): the login
      is linked to that account, proof of both; refused when it is linked to another one already.
    - Else the account linked to (iss, sub); else, for an email the provider vouches for in an allowed
      domain, the account with that email (linked now) or a new one. Linking by email to an account that
      has a password removes that password and ends its sessions and keys: whoever chose it (the email was
      never proven when it was) keeps no door the school did not open."""
    issuer, subject = str(claims["iss"]), str(claims["sub"])
    found = await identities.find(conn, kind="oidc", issuer=issuer, subject=subject)
    if link_user_id is not None:
        if found is not None and found.user_id != link_user_id:
            raise OidcRefused("linked_elsewhere", "this school login is linked to another account")
        if found is None:
            email = claims.get("email") if isinstance(claims.get("email"), str) else None
            await people.link(
                conn, audit, link_user_id, kind="oidc", issuer=issuer, subject=subject, email=email
            )
        user_id = link_user_id
    elif found is not None:
        user_id = found.user_id
    else:
        user_id = await _link_by_email(conn, audit, settings, claims, issuer, subject)
    account = await accounts.account(conn, user_id=user_id)
    if account is None or account.disabled_at is not None:
        raise OidcRefused("disabled", "the account is disabled")
    return user_id


async def _link_by_email(
    conn: Connection, audit: Audit, settings: Settings, claims: dict[str, Any], issuer: str, subject: str
) -> UUID:
    raw = claims.get("email")
    if not isinstance(raw, str) or "@" not in raw:
        raise OidcRefused("no_email", "the provider sent no email address")
    if not _email_verified(claims):
        raise OidcRefused("unverified_email", "your school did not confirm this email")
    try:
        email = normalize_email(raw)
    except NotAnEmail:
        raise OidcRefused("no_email", "the provider sent no usable email address") from None
    domains = settings.oidc.domains
    if domains and email.rpartition("@")[2] not in domains:
        raise OidcRefused("domain_not_allowed", "the email's domain is not allowed to sign in")
    existing = await accounts.account_by_email(conn, email=email)
    if existing is None:
        name = claims.get("name")
        shown = name.strip()[:200] if isinstance(name, str) and name.strip() else None
        person = Person(email=email, display_name=shown, email_verified=True)  # the school vouches
        try:
            async with conn.transaction():  # a savepoint: a concurrent sign-up may take the email first
                existing = await people.create(conn, audit, person, via="oidc")
        except EmailTaken:
            existing = await accounts.account_by_email(conn, email=email)
            assert existing is not None
    if existing.disabled_at is not None:
        raise OidcRefused("disabled", "the account is disabled")
    await accounts.mark_email_verified(conn, user_id=existing.id)
    if existing.has_password:
        await accounts.set_password(conn, user_id=existing.id, password_hash=None)
        await credentials.end_all(conn, audit, existing.id, reason="school-login-linked")
        await audit.own(conn, "password.removed", existing.id, {"via": "oidc", "issuer": issuer})
    await people.link(conn, audit, existing.id, kind="oidc", issuer=issuer, subject=subject, email=email)
    return existing.id

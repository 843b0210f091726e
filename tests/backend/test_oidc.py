"""Sign-in with the school's OpenID Connect provider, end to end against a real provider process
(oidc-provider-mock, a Flask app run by its own CLI on a free port): our /auth/oidc/login, the provider's
authorize form submitted as the user, our callback (which exchanges the code at the provider's token
endpoint over real HTTP), and the session cookie that follows. Then account linking and the refusals."""

import base64
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from backend.accounts.oidc.flow import safe_next
from core.accounts.passwords import hash_password
from core.store.accounts import accounts, api_keys
from tests.backend.conftest import Api
from tests.conftest import changed_settings
from tests.oidc_provider import running_provider

CLIENT_ID = "studyai-test"
DOMAIN = "school.example"


@dataclass
class Provider:
    issuer: str
    http: httpx.AsyncClient  # a real HTTP client: the test plays the person at the provider

    async def user(self, sub: str, **claims: Any) -> None:
        """The claims the provider will put in this subject's ID token."""
        response = await self.http.put(f"{self.issuer}/users/{sub}", json=claims)
        assert response.status_code == 204, response.text


@pytest.fixture(scope="module")
def provider_process() -> Iterator[str]:
    with running_provider() as issuer:
        yield issuer


@pytest.fixture(scope="module")
async def provider(provider_process: str) -> AsyncIterator[Provider]:
    async with httpx.AsyncClient(timeout=10) as http:
        yield Provider(provider_process, http)


@pytest.fixture(scope="module")
def oidc_api(api: Api, provider_process: str) -> Iterator[Api]:
    values = {
        "OIDC_ISSUER": provider_process,
        "OIDC_CLIENT_ID": CLIENT_ID,
        "OIDC_CLIENT_SECRET": "test-secret",
        "OIDC_ALLOWED_DOMAINS": DOMAIN,
    }
    with changed_settings(api.app, **values):
        yield api


@pytest.fixture
async def browser(oidc_api: Api) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=oidc_api.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://studyai.test") as http:
        yield http


def unique(name: str) -> str:
    return f"{name}-{time.time_ns()}"


async def start(browser: httpx.AsyncClient, next_path: str = "/app/#/projects") -> str:
    """Our login: 302 to the provider's authorization endpoint."""
    response = await browser.get("/auth/oidc/login", params={"next": next_path})
    assert response.status_code == 302, response.text
    return response.headers["location"]


async def authorize(provider: Provider, authorization_url: str, sub: str) -> str:
    """Submits the provider's authorize form as `sub`; the callback URL it redirects the browser to."""
    response = await provider.http.post(authorization_url, data={"sub": sub})
    assert response.status_code == 302, response.text
    callback = response.headers["location"]
    assert callback.startswith("http://studyai.test/auth/oidc/callback?")
    return callback


async def sign_in(browser: httpx.AsyncClient, provider: Provider, sub: str) -> httpx.Response:
    """The whole flow; the callback's response (a 302, to the app or to its sign-in page)."""
    return await browser.get(await authorize(provider, await start(browser), sub))


def refused_with(response: httpx.Response, code: str) -> None:
    assert response.status_code == 302
    assert response.headers["location"] == f"/app/#/signin?error={code}"


async def test_first_sign_in_creates_the_account_and_links_it(
    browser: httpx.AsyncClient, provider: Provider, db: Any
) -> None:
    sub, email = unique("sub"), f"{unique('ada')}@{DOMAIN}"
    await provider.user(sub, email=email, email_verified=True, name="Ada Lovelace")
    response = await sign_in(browser, provider, sub)
    assert response.status_code == 302 and response.headers["location"] == "/app/#/projects"
    session = await browser.get("/auth/session")
    assert session.status_code == 200, session.text
    user = session.json()["user"]
    assert user["email"] == email and user["display_name"] == "Ada Lovelace"
    identity = await (
        await db.execute("SELECT user_id, issuer, subject FROM identities WHERE subject = %s", (sub,))
    ).fetchone()
    assert identity == {"user_id": identity["user_id"], "issuer": provider.issuer, "subject": sub}
    assert str(identity["user_id"]) == user["id"]
    events = await (
        await db.execute(
            "SELECT action FROM security_events WHERE target_user_id = %s", (identity["user_id"],)
        )
    ).fetchall()
    assert {"user.created", "identity.linked", "session.created"} <= {e["action"] for e in events}
    created = await accounts.account(db, user_id=identity["user_id"])
    assert created is not None and not created.has_password
    session_row = await (
        await db.execute("SELECT via FROM browser_sessions WHERE user_id = %s", (identity["user_id"],))
    ).fetchone()
    assert session_row == {"via": "oidc"}


async def test_the_request_uses_pkce_s256_and_a_lax_httponly_flow_cookie(
    browser: httpx.AsyncClient, db: Any
) -> None:
    response = await browser.get("/auth/oidc/login")
    header = response.headers["set-cookie"].lower()
    assert "studyai_oidc=" in header and "httponly" in header and "samesite=lax" in header
    query = parse_qs(urlsplit(response.headers["location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["response_type"] == ["code"]
    assert query["redirect_uri"] == ["http://studyai.test/auth/oidc/callback"]
    flow = await (
        await db.execute(
            "SELECT nonce, code_verifier, browser_hash, next_path FROM auth_flows WHERE state = %s",
            (query["state"][0],),
        )
    ).fetchone()
    digest = hashlib.sha256(flow["code_verifier"].encode()).digest()
    assert query["code_challenge"] == [base64.urlsafe_b64encode(digest).rstrip(b"=").decode()]
    assert query["nonce"] == [flow["nonce"]] and flow["next_path"] == "/app/"
    cookie = browser.cookies["studyai_oidc"]
    assert flow["browser_hash"] == hashlib.sha256(cookie.encode()).hexdigest()


async def test_a_second_sign_in_finds_the_same_account_even_with_a_new_email(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    sub = unique("sub")
    await provider.user(sub, email=f"{unique('old')}@{DOMAIN}", email_verified=True)
    await sign_in(browser, provider, sub)
    first = (await browser.get("/auth/session")).json()["user"]["id"]
    browser.cookies.clear()
    await provider.user(sub, email=f"{unique('renamed')}@{DOMAIN}", email_verified=True)
    response = await sign_in(browser, provider, sub)
    assert response.headers["location"] == "/app/#/projects"
    assert (await browser.get("/auth/session")).json()["user"]["id"] == first


async def test_a_verified_email_links_an_existing_password_account_and_ends_its_password(
    browser: httpx.AsyncClient, provider: Provider, db: Any
) -> None:
    """The email of a password account was never proven (anyone may have signed up with it): the school
    login that vouches for it takes the account over, and the password, with every session and key it
    opened, ends."""
    email = f"{unique('grace')}@{DOMAIN}"
    existing = await accounts.create_account(
        db, email=email, password_hash=hash_password("a long passphrase 1")
    )
    assert existing is not None
    key = await api_keys.create_api_key(db, user_id=existing.id)
    sub = unique("sub")
    await provider.user(sub, email=email.upper(), email_verified=True)
    await sign_in(browser, provider, sub)
    assert (await browser.get("/auth/session")).json()["user"]["id"] == str(existing.id)
    still = await accounts.account(db, user_id=existing.id)
    assert still is not None and not still.has_password
    assert (await browser.get("/projects", headers={"Authorization": f"Bearer {key}"})).status_code == 401
    actions = [
        row["action"]
        for row in await (
            await db.execute("SELECT action FROM security_events WHERE target_user_id = %s", (existing.id,))
        ).fetchall()
    ]
    assert {"credentials.revoked", "password.removed", "identity.linked"} <= set(actions)


async def test_an_unverified_email_neither_links_nor_creates(
    browser: httpx.AsyncClient, provider: Provider, db: Any, caplog: pytest.LogCaptureFixture
) -> None:
    email = f"{unique('victim')}@{DOMAIN}"
    existing = await accounts.create_account(
        db, email=email, password_hash=hash_password("a long passphrase 1")
    )
    assert existing is not None
    sub, fresh = unique("sub"), f"{unique('new')}@{DOMAIN}"
    await provider.user(sub, email=email, email_verified=False)
    refused_with(await sign_in(browser, provider, sub), "unverified_email")
    await provider.user(sub, email=fresh)  # no email_verified at all
    refused_with(await sign_in(browser, provider, sub), "unverified_email")
    assert await accounts.account_by_email(db, email=fresh) is None
    linked = await (await db.execute("SELECT 1 FROM identities WHERE subject = %s", (sub,))).fetchone()
    assert linked is None and (await browser.get("/auth/session")).status_code == 401
    logged = [json.loads(r.getMessage()) for r in caplog.records if "oidc_refused" in r.getMessage()]
    assert logged and logged[-1]["code"] == "unverified_email"
    assert logged[-1]["reason"] == "your school did not confirm this email"


async def test_entra_ids_verified_domain_claim_counts_as_verified(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    sub, email = unique("sub"), f"{unique('entra')}@{DOMAIN}"
    await provider.user(sub, email=email, xms_edov=True)
    assert (await sign_in(browser, provider, sub)).headers["location"] == "/app/#/projects"
    assert (await browser.get("/auth/session")).json()["user"]["email"] == email


async def test_a_domain_not_allowed_is_refused(
    browser: httpx.AsyncClient, provider: Provider, db: Any
) -> None:
    sub, email = unique("sub"), f"{unique('outsider')}@elsewhere.example"
    await provider.user(sub, email=email, email_verified=True)
    refused_with(await sign_in(browser, provider, sub), "domain_not_allowed")
    assert await accounts.account_by_email(db, email=email) is None


async def test_a_disabled_account_is_refused(browser: httpx.AsyncClient, provider: Provider, db: Any) -> None:
    sub = unique("sub")
    await provider.user(sub, email=f"{unique('gone')}@{DOMAIN}", email_verified=True)
    await sign_in(browser, provider, sub)
    user_id = (await browser.get("/auth/session")).json()["user"]["id"]
    await accounts.set_disabled(db, user_id=user_id, disabled=True)
    browser.cookies.clear()
    refused_with(await sign_in(browser, provider, sub), "disabled")


async def test_a_replayed_callback_is_refused(browser: httpx.AsyncClient, provider: Provider) -> None:
    sub = unique("sub")
    await provider.user(sub, email=f"{unique('replay')}@{DOMAIN}", email_verified=True)
    callback = await authorize(provider, await start(browser), sub)
    cookie = browser.cookies["studyai_oidc"]
    assert (await browser.get(callback)).headers["location"] == "/app/#/projects"
    browser.cookies.clear()
    browser.cookies.set("studyai_oidc", cookie, domain="studyai.test", path="/auth/oidc")
    refused_with(await browser.get(callback), "expired")


async def test_a_callback_without_the_browsers_flow_cookie_is_refused(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    sub = unique("sub")
    await provider.user(sub, email=f"{unique('victim')}@{DOMAIN}", email_verified=True)
    callback = await authorize(provider, await start(browser), sub)
    browser.cookies.clear()  # a callback URL carried to another browser (login CSRF)
    refused_with(await browser.get(callback), "wrong_browser")
    callback = await authorize(provider, await start(browser), sub)
    browser.cookies.set("studyai_oidc", "not-the-flow-cookie", domain="studyai.test", path="/auth/oidc")
    refused_with(await browser.get(callback), "wrong_browser")
    # The refused flow is spent: the right cookie later does not revive it.
    assert (await browser.get("/auth/session")).status_code == 401


async def test_only_app_paths_are_honoured_after_sign_in(
    browser: httpx.AsyncClient, provider: Provider
) -> None:
    sub = unique("sub")
    await provider.user(sub, email=f"{unique('next')}@{DOMAIN}", email_verified=True)
    response = await browser.get(
        await authorize(provider, await start(browser, "https://evil.example/app"), sub)
    )
    assert response.headers["location"] == "/app/"
    for bad in (
        "//evil.example/app",
        "/api",
        "/app/" + "x" * 600,
        "/app\\@evil",
        "https://evil.example/app",
        "",
        None,
    ):
        assert safe_next(bad) == "/app/"
    assert safe_next("/app/#/projects/1") == "/app/#/projects/1"


async def test_a_provider_refusal_lands_on_the_sign_in_page(browser: httpx.AsyncClient) -> None:
    location = await start(browser)
    state = parse_qs(urlsplit(location).query)["state"][0]
    response = await browser.get("/auth/oidc/callback", params={"state": state, "error": "access_denied"})
    refused_with(response, "denied")


async def test_oidc_answers_404_when_not_configured(oidc_api: Api, browser: httpx.AsyncClient) -> None:
    with changed_settings(oidc_api.app, OIDC_ISSUER=None):
        assert (await browser.get("/auth/oidc/login")).status_code == 404
        assert (await browser.get("/auth/oidc/callback?code=x&state=y")).status_code == 404
        assert (await browser.get("/auth/config")).json()["oidc_enabled"] is False
    assert (await browser.get("/auth/config")).json()["oidc_enabled"] is True

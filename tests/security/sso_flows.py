"""The school's login and an LMS as the security tests drive them on the real server: the OIDC flow at
the provider process, and an LTI platform's registration and launch."""

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from joserfc.jwk import RSAKey

from tests.lti_platform import launch_token
from tests.security.people import Browser
from tests.security.stack import Stack


def school_sign_in(stack: Stack, browser: Browser, sub: str, *, link: bool = False) -> httpx.Response:
    """The whole OIDC flow as `sub`: our login (or, signed in, the account screen's link), the provider's
    form, our callback."""
    if link:
        started = browser.post("/auth/oidc/link")
        assert started.status_code == 200, started.text
        authorization_url = started.json()["url"]
    else:
        started = browser.get("/auth/oidc/login", params={"next": "/app/#/projects"})
        assert started.status_code == 302, started.text
        authorization_url = started.headers["location"]
    at_provider = httpx.post(authorization_url, data={"sub": sub}, timeout=10)
    assert at_provider.status_code == 302, at_provider.text
    callback = at_provider.headers["location"]
    return browser.http.get(callback.removeprefix(stack.base))


def provider_user(stack: Stack, sub: str, **claims: Any) -> None:
    response = httpx.put(f"{stack.issuer}/users/{sub}", json=claims, timeout=10)
    assert response.status_code == 204, response.text


def register(admin: Browser, issuer: str, jwks_url: str) -> dict[str, Any]:
    body = {
        "name": "School LMS",
        "issuer": issuer,
        "client_id": "studyai",
        "auth_login_url": f"{issuer}/auth",
        "jwks_url": jwks_url,
        "deployment_ids": ["d1"],
    }
    response = admin.post("/admin/lti/platforms", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def lti_login(stack: Stack, browser: Browser, issuer: str) -> dict[str, str]:
    """The platform's login initiation: the query of our redirect to its authorization page (state, nonce)."""
    form = {
        "iss": issuer,
        "login_hint": "h",
        "target_link_uri": f"{stack.base}/lti/launch",
        "client_id": "studyai",
    }
    started = browser.http.post("/lti/login", data=form, headers={"Origin": issuer})
    assert started.status_code == 302, started.text
    return {k: v[0] for k, v in parse_qs(urlsplit(started.headers["location"]).query).items()}


def launch(stack: Stack, browser: Browser, issuer: str, key: RSAKey, **claims: Any) -> httpx.Response:
    params = lti_login(stack, browser, issuer)
    token = launch_token(
        key,
        issuer=issuer,
        client_id="studyai",
        nonce=params["nonce"],
        tool=stack.base,
        deployment="d1",
        claims=claims,
    )
    return browser.http.post(
        "/lti/launch", data={"id_token": token, "state": params["state"]}, headers={"Origin": issuer}
    )


def ticket_of(page: httpx.Response) -> str:
    found = re.search(r"/auth/ticket/([A-Za-z0-9_-]+)", page.text)
    assert found, page.text
    return found.group(1)

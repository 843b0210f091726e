"""The ID token checks (backend/accounts/oidc/tokens.py) against tokens signed here with keys of our own:
each forgery or mistake is refused with its reason. The key rotation test serves the discovery document
and JWKS from a real local HTTP server, as a provider does."""

import base64
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from backend.accounts.oidc.provider import OidcProviders, ProviderUnreachable
from backend.accounts.oidc.tokens import OidcRefused, verify_from_provider, verify_id_token
from tests.http_stubs import send

CLIENT_ID = "studyai"
NONCE = "the-flow-nonce"


def rsa(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid})


def public(*keys: RSAKey) -> KeySet:
    return KeySet.import_key_set(KeySet(list(keys)).as_dict(private=False))


def claims(issuer: str, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    base = {"iss": issuer, "aud": CLIENT_ID, "sub": "s-1", "iat": now, "exp": now + 300, "nonce": NONCE}
    return {k: v for k, v in {**base, **changes}.items() if v is not None}


def sign(key: RSAKey | OctKey, payload: dict[str, Any], alg: str = "RS256") -> str:
    return jwt.encode({"alg": alg, "kid": key.kid}, payload, key)


ISSUER = "https://idp.school.example"
KEY = rsa("k1")


def refusal(token: str, keys: KeySet | None = None) -> str:
    with pytest.raises(OidcRefused) as refused:
        verify_id_token(token, keys=keys or public(KEY), issuer=ISSUER, client_id=CLIENT_ID, nonce=NONCE)
    return refused.value.code


def test_a_good_token_passes() -> None:
    token = sign(KEY, claims(ISSUER, email="ada@school.example"))
    verified = verify_id_token(token, keys=public(KEY), issuer=ISSUER, client_id=CLIENT_ID, nonce=NONCE)
    assert verified["sub"] == "s-1" and verified["email"] == "ada@school.example"
    several = sign(KEY, claims(ISSUER, aud=["other", CLIENT_ID], azp=CLIENT_ID))
    assert verify_id_token(several, keys=public(KEY), issuer=ISSUER, client_id=CLIENT_ID, nonce=NONCE)


def test_the_audience_must_be_us() -> None:
    assert refusal(sign(KEY, claims(ISSUER, aud="another-app"))) == "wrong_audience"
    assert refusal(sign(KEY, claims(ISSUER, aud=None))) == "wrong_audience"  # missing
    # Several audiences: azp must name us.
    assert refusal(sign(KEY, claims(ISSUER, aud=[CLIENT_ID, "other"]))) == "wrong_audience"
    assert refusal(sign(KEY, claims(ISSUER, aud=[CLIENT_ID, "other"], azp="other"))) == "wrong_audience"


def test_the_nonce_must_be_the_flows() -> None:
    assert refusal(sign(KEY, claims(ISSUER, nonce="replayed-from-another-flow"))) == "wrong_nonce"
    assert refusal(sign(KEY, claims(ISSUER, nonce=None))) == "wrong_nonce"


def test_an_expired_or_future_token_is_refused() -> None:
    now = int(time.time())
    assert refusal(sign(KEY, claims(ISSUER, iat=now - 7200, exp=now - 3600))) == "expired"
    assert refusal(sign(KEY, claims(ISSUER, iat=now + 3600, exp=now + 7200))) == "issued_later"
    assert refusal(sign(KEY, claims(ISSUER, exp=None))) == "bad_claims"


def test_another_issuer_is_refused() -> None:
    assert refusal(sign(KEY, claims("https://evil.example"))) == "wrong_issuer"
    assert refusal(sign(KEY, claims(ISSUER + "/"))) == "wrong_issuer"


def _b64(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def test_an_unsigned_token_is_refused() -> None:
    unsigned = f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(claims(ISSUER))}."
    assert refusal(unsigned) == "bad_algorithm"
    no_alg = f"{_b64({'typ': 'JWT'})}.{_b64(claims(ISSUER))}."
    assert refusal(no_alg) == "bad_algorithm"


def test_a_shared_secret_signature_is_refused() -> None:
    # HS256 with a secret an attacker knows (say, a leaked client secret): never a provider's signature.
    secret = OctKey.import_key("client-secret-known-to-many-0123456789", parameters={"kid": "k1"})
    assert refusal(sign(secret, claims(ISSUER), alg="HS256")) == "bad_algorithm"


def test_a_token_signed_by_another_key_is_refused() -> None:
    assert refusal(sign(rsa("attacker"), claims(ISSUER))) == "unknown_key"
    assert refusal(sign(rsa("k1"), claims(ISSUER))) == "bad_signature"  # our kid, their key
    assert refusal("not.a.token") == "malformed_token"
    tampered = sign(KEY, claims(ISSUER)).split(".")
    tampered[1] = _b64(claims(ISSUER, sub="someone-else"))
    assert refusal(".".join(tampered)) == "bad_signature"


class _Provider:
    """Discovery and JWKS over real HTTP from a thread; `keys` can be rotated and fetches are counted."""

    def __init__(self) -> None:
        self.keys: list[RSAKey] = []
        self.jwks_fetches = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body: dict[str, Any] = {
                        "issuer": provider.issuer,
                        "authorization_endpoint": f"{provider.issuer}/authorize",
                        "token_endpoint": f"{provider.issuer}/token",
                        "jwks_uri": f"{provider.issuer}/jwks",
                    }
                elif self.path == "/jwks":
                    provider.jwks_fetches += 1
                    body = dict(KeySet(provider.keys).as_dict(private=False))
                else:
                    self.send_error(404)
                    return
                send(self, json.dumps(body).encode())

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def local_provider() -> Iterator[_Provider]:
    provider = _Provider()
    thread = threading.Thread(target=provider.server.serve_forever, daemon=True)
    thread.start()
    yield provider
    provider.server.shutdown()
    provider.server.server_close()


async def test_a_rotated_key_is_fetched_once_and_an_unknown_one_refused(local_provider: _Provider) -> None:
    old, new = rsa("old"), rsa("new")
    local_provider.keys = [old]
    providers = OidcProviders()
    try:

        async def verify(token: str) -> dict[str, Any]:
            return await verify_from_provider(
                providers, token, issuer=local_provider.issuer, client_id=CLIENT_ID, nonce=NONCE
            )

        assert (await verify(sign(old, claims(local_provider.issuer))))["sub"] == "s-1"
        assert (await verify(sign(old, claims(local_provider.issuer))))["sub"] == "s-1"
        assert local_provider.jwks_fetches == 1  # cached
        local_provider.keys = [old, new]
        assert (await verify(sign(new, claims(local_provider.issuer))))["sub"] == "s-1"
        assert local_provider.jwks_fetches == 2  # refetched once for the new kid
        with pytest.raises(OidcRefused) as refused:
            await verify(sign(rsa("forged"), claims(local_provider.issuer)))
        assert refused.value.code == "unknown_key" and local_provider.jwks_fetches == 3
    finally:
        await providers.aclose()


async def test_a_discovery_document_for_another_issuer_is_refused(local_provider: _Provider) -> None:
    providers = OidcProviders()
    try:
        with pytest.raises(ProviderUnreachable):
            await providers.metadata(local_provider.issuer.replace("127.0.0.1", "localhost"))
        assert (await providers.metadata(local_provider.issuer)).jwks_uri == f"{local_provider.issuer}/jwks"
    finally:
        await providers.aclose()

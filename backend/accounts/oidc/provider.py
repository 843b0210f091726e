"""The school's OpenID Connect provider as the API sees it: its discovery document
(`<issuer>/.well-known/openid-configuration`) and its signing keys (JWKS), fetched over HTTP and kept per
app (backend/resources.py holds one `OidcProviders`), keyed by issuer, so a changed OIDC_ISSUER needs no
restart. Keys are refetched when they expire or when a token names a key id we do not have (rotation)."""

import time
from dataclasses import dataclass
from typing import Any

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

# Providers rotate keys with overlap (days); an hour keeps a restart-free app current.
CACHE_SECONDS = 3600.0
HTTP_TIMEOUT = 10.0


class ProviderUnreachable(Exception):
    """The discovery document or the keys could not be fetched or made no sense."""


@dataclass(frozen=True, slots=True)
class ProviderMetadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str


class OidcProviders:
    """Discovery documents and key sets by issuer, each cached for CACHE_SECONDS."""

    def __init__(self, http: httpx.AsyncClient | None = None, cache_seconds: float = CACHE_SECONDS) -> None:
        self._http = http or httpx.AsyncClient(timeout=HTTP_TIMEOUT, follow_redirects=False)
        self._cache_seconds = cache_seconds
        self._metadata: dict[str, tuple[float, ProviderMetadata]] = {}
        self._keys: dict[str, tuple[float, KeySet]] = {}

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            response = await self._http.get(url, headers={"Accept": "application/json"})
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise ProviderUnreachable(f"{url}: {type(error).__name__}") from error
        if not isinstance(body, dict):
            raise ProviderUnreachable(f"{url}: not a JSON object")
        return body

    async def metadata(self, issuer: str) -> ProviderMetadata:
        cached = self._metadata.get(issuer)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        body = await self._get_json(issuer.rstrip("/") + "/.well-known/openid-configuration")
        # OpenID Connect Discovery 1.0 §4.3: the document's issuer must be the one asked for, exactly.
        if body.get("issuer") != issuer:
            raise ProviderUnreachable(f"discovery names issuer {body.get('issuer')!r}, not {issuer!r}")
        fields = ("authorization_endpoint", "token_endpoint", "jwks_uri")
        if not all(isinstance(body.get(name), str) and body[name] for name in fields):
            raise ProviderUnreachable("discovery document lacks an endpoint")
        found = ProviderMetadata(issuer, *(str(body[name]) for name in fields))
        self._metadata[issuer] = (time.monotonic() + self._cache_seconds, found)
        return found

    async def keys(self, issuer: str, *, refresh: bool = False) -> KeySet:
        """The provider's public keys; `refresh` fetches them again (a token named an unknown key id)."""
        cached = self._keys.get(issuer)
        if not refresh and cached is not None and cached[0] > time.monotonic():
            return cached[1]
        body = await self._get_json((await self.metadata(issuer)).jwks_uri)
        try:
            # Only asymmetric public keys: a shared secret or private parts in a JWKS are never ours to use.
            listed = [k for k in body.get("keys", []) if isinstance(k, dict) and k.get("kty") in _ASYMMETRIC]
            found = KeySet.import_key_set({"keys": [_public(k) for k in listed]})
        except (JoseError, ValueError, TypeError) as error:
            raise ProviderUnreachable(f"JWKS: {type(error).__name__}") from error
        self._keys[issuer] = (time.monotonic() + self._cache_seconds, found)
        return found


_ASYMMETRIC = frozenset({"RSA", "EC", "OKP"})
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth"})


def _public(key: dict[str, Any]) -> Any:
    return {name: value for name, value in key.items() if name not in _PRIVATE}

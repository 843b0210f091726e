"""Keys of LTI launches: the tool's own RSA key (published at GET /lti/jwks, which LMSs ask for at
registration; one per deployment: core/store/accounts/tool_key.py) and the platforms' key sets, fetched
from their jwks_url and cached per app."""

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from joserfc.jwk import KeySet, RSAKey
from psycopg_pool import AsyncConnectionPool

from core.store.accounts import tool_key
from core.store.accounts.lti import Platform

MAX_JWKS_BYTES = 64 * 1024  # a platform's key set is a few KiB; more is not a key set
JWKS_TTL_S = 300  # a platform rotates keys rarely; a kid we do not know yet refetches sooner
REFETCH_MIN_S = 30  # an unknown kid refetches at most this often: forged tokens cannot drive a fetch storm
FETCH_TIMEOUT_S = 10
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class KeysUnavailable(Exception):
    """The platform's key set could not be fetched or read."""


async def load_tool_key(pool: AsyncConnectionPool, *, key_file: Path | None, data_dir: Path) -> RSAKey:
    """The tool's key: a mounted one (LTI_TOOL_KEY_FILE, e.g. a Kubernetes Secret), else the deployment's
    stored in Postgres, which every replica shares. The first process to need it stores the key an older
    version kept in <data_dir>/lti/tool_key.pem (the LMSs already trust it) or a new one."""
    if key_file is not None:
        return _signing_key(key_file.read_bytes())
    async with pool.connection() as conn:
        pem = await tool_key.stored_tool_key(conn)
        if pem is None:
            legacy = data_dir / "lti" / "tool_key.pem"
            candidate = (
                legacy.read_bytes() if legacy.exists() else RSAKey.generate_key(2048).as_pem(private=True)
            )
            pem = await tool_key.keep_tool_key(conn, candidate.decode())
    return _signing_key(pem.encode())


def _signing_key(pem: bytes) -> RSAKey:
    key = RSAKey.import_key(pem)
    return RSAKey.import_key(
        key.as_dict(private=True) | {"kid": key.thumbprint(), "alg": "RS256", "use": "sig"}
    )


@dataclass
class _Fetched:
    keys: KeySet
    at: float


@dataclass
class LtiKeys:
    """The tool's key (loaded on first use: the API may start before the migrations that hold it) and the
    platforms' key sets by URL; one per app (backend/resources.py)."""

    load_key: Callable[[], Awaitable[RSAKey]]
    http: httpx.AsyncClient
    _cache: dict[str, _Fetched] = field(default_factory=dict)
    _tool_key: RSAKey | None = None

    async def tool_key(self) -> RSAKey:
        if self._tool_key is None:
            self._tool_key = await self.load_key()
        return self._tool_key

    async def public_jwks(self) -> dict[str, Any]:
        return {"keys": [(await self.tool_key()).as_dict(private=False)]}

    async def platform_keys(self, platform: Platform, *, kid: str | None) -> KeySet:
        """The platform's keys: its stored set, else its jwks_url's (cached for JWKS_TTL_S, refetched
        sooner when the token names a kid the cached set lacks: the platform rotated its key)."""
        if platform.jwks_url is None:
            return _key_set(platform.jwks or {})
        now = time.monotonic()
        cached = self._cache.get(platform.jwks_url)
        stale = cached is None or now - cached.at > JWKS_TTL_S
        missing = cached is not None and kid is not None and not _has_kid(cached.keys, kid)
        if stale or (missing and cached is not None and now - cached.at > REFETCH_MIN_S):
            cached = _Fetched(await self._fetch(platform.jwks_url), now)
            self._cache[platform.jwks_url] = cached
        assert cached is not None
        return cached.keys

    async def _fetch(self, url: str) -> KeySet:
        """The key set at `url` (https, or http on this machine's loopback: no one on the way can swap
        it), at most MAX_JWKS_BYTES, no redirects followed."""
        if not key_set_url_allowed(url):
            raise KeysUnavailable(f"the key set URL is not https: {url}")
        try:
            async with self.http.stream(
                "GET", url, timeout=FETCH_TIMEOUT_S, follow_redirects=False
            ) as response:
                response.raise_for_status()
                body = bytearray()
                async for piece in response.aiter_bytes():
                    body += piece
                    if len(body) > MAX_JWKS_BYTES:
                        raise KeysUnavailable(f"the key set at {url} is larger than {MAX_JWKS_BYTES} bytes")
            return _key_set(json.loads(body))
        except (httpx.HTTPError, ValueError) as error:
            raise KeysUnavailable(f"the platform's keys could not be fetched from {url}: {error}") from error


def key_set_url_allowed(url: str) -> bool:
    """https anywhere; plain http only to this machine's loopback (an LMS beside the tool, the tests)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return True
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def _key_set(data: dict[str, Any]) -> KeySet:
    try:
        return KeySet.import_key_set(data)  # type: ignore[arg-type]
    except Exception as error:  # joserfc raises several kinds for a malformed set
        raise KeysUnavailable(f"the platform's key set is not a valid JWK set: {error}") from error


def _has_kid(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)

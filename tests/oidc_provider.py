"""A real OpenID Connect provider process for the sign-in tests: oidc-provider-mock (a Flask app) run by
its own CLI on a free port. A test sets a subject's claims with PUT /users/{sub} and signs in as that
subject on the provider's authorize form."""

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from benchmarks.fake_model import free_port


@contextmanager
def running_provider() -> Iterator[str]:
    """The provider's issuer URL, for as long as the block lasts."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--port", str(port), "--require-nonce"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    issuer = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{issuer}/.well-known/openid-configuration").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "the provider did not start"
            time.sleep(0.1)
        yield issuer
    finally:
        process.terminate()
        process.wait(10)


async def set_claims(issuer: str, sub: str, **claims: Any) -> None:
    """The claims the provider at `issuer` will put in this subject's ID token."""
    async with httpx.AsyncClient() as http:
        response = await http.put(f"{issuer}/users/{sub}", json=claims)
    assert response.status_code == 204, response.text

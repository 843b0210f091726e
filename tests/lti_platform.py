"""An LMS as the LTI tests play it: a signed LTI 1.3 resource-link launch (the ID token a platform posts
to the tool), and its key set served by a real HTTP server in a thread."""

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.http_stubs import send

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
LIS = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTRUCTOR, LEARNER = LIS + "Instructor", LIS + "Learner"


def platform_key(kid: str = "platform-1") -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


def launch_token(
    key: RSAKey,
    *,
    issuer: str,
    client_id: str,
    nonce: str,
    tool: str,
    deployment: str,
    claims: dict[str, Any] | None = None,
) -> str:
    """A resource-link launch's ID token signed with `key`, with `claims` changed (a None value: left
    out), any of the base ones (iss, aud, nonce, ...) included."""
    now = int(time.time())
    body = {
        "iss": issuer,
        "aud": client_id,
        "sub": "person-1",
        "exp": now + 300,
        "iat": now,
        "nonce": nonce,
        "email": None,
        "name": "Ada Lovelace",
        CLAIM + "deployment_id": deployment,
        CLAIM + "message_type": "LtiResourceLinkRequest",
        CLAIM + "version": "1.3.0",
        CLAIM + "roles": [INSTRUCTOR],
        CLAIM + "context": {"id": "course-1", "title": "Analytical Engines 101"},
        CLAIM + "resource_link": {"id": "link-1"},
        CLAIM + "target_link_uri": f"{tool}/lti/launch",
    } | (claims or {})
    kept = {name: value for name, value in body.items() if value is not None}
    return jwt.encode({"alg": "RS256", "kid": key.kid}, kept, key)


# (path, query) -> (body, content type) for a path other than /jwks.
Pages = Callable[[str, dict[str, list[str]]], tuple[str, str]]


@contextmanager
def platform_server(jwks: Callable[[], dict[str, Any]], pages: Pages | None = None) -> Iterator[str]:
    """A real HTTP server: GET /jwks answers `jwks()`, any other GET `pages`. Its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/jwks":
                body, kind = json.dumps(jwks()), "application/json"
            elif pages is not None:
                body, kind = pages(parts.path, parse_qs(parts.query))
            else:
                self.send_error(404)
                return
            send(self, body.encode(), kind)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

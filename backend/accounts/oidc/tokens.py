"""An ID token from the school's provider, checked before anyone is signed in with it: a signature by one
of the provider's keys (an asymmetric algorithm; `none` and shared-secret HMAC are refused), `iss` exactly
OIDC_ISSUER, our client id among the audiences (and as `azp` when there are several), not expired, not
issued in the future, and the nonce of the flow that asked for it. Every refusal names its reason."""

from typing import Any

from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ClaimError,
    ExpiredTokenError,
    InvalidKeyIdError,
    JoseError,
    MissingAlgorithmError,
    UnsupportedAlgorithmError,
)
from joserfc.jwk import KeySet

from backend.accounts.oidc.provider import OidcProviders

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
# Clock skew between the provider and us.
LEEWAY_SECONDS = 60
_CLAIM_CODES = {"iss": "wrong_issuer", "aud": "wrong_audience", "nonce": "wrong_nonce", "iat": "issued_later"}


class OidcRefused(Exception):
    """A sign-in refused: `code` goes into the app's URL (/app/#/signin?error=code), `reason` to the log."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


def verify_id_token(
    id_token: str, *, keys: KeySet, issuer: str, client_id: str, nonce: str, now: int | None = None
) -> dict[str, Any]:
    """The token's claims once every check passes; OidcRefused otherwise (code `unknown_key` when no key
    has the token's key id: the caller may refetch the keys once)."""
    try:
        token = jwt.decode(id_token, keys, algorithms=ALGORITHMS)
    except InvalidKeyIdError as error:
        raise OidcRefused(
            "unknown_key", "the ID token is signed by a key the provider does not list"
        ) from error
    except (UnsupportedAlgorithmError, MissingAlgorithmError) as error:
        raise OidcRefused("bad_algorithm", "the ID token is unsigned or uses a refused algorithm") from error
    except BadSignatureError as error:
        raise OidcRefused("bad_signature", "the ID token's signature does not verify") from error
    except (JoseError, ValueError, TypeError) as error:
        raise OidcRefused(
            "malformed_token", f"the ID token cannot be read ({type(error).__name__})"
        ) from error
    registry = jwt.JWTClaimsRegistry(
        now=now,
        leeway=LEEWAY_SECONDS,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    claims = token.claims
    try:
        registry.validate(claims)
    except ExpiredTokenError as error:
        raise OidcRefused("expired", "the ID token has expired") from error
    except ClaimError as error:
        code = _CLAIM_CODES.get(error.claim, "bad_claims")
        raise OidcRefused(code, f"claim {error.claim!r}: {error.description}") from error
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    azp = claims.get("azp")
    # OpenID Connect Core §3.1.3.7: with several audiences azp must be there; when there, it must be us.
    if (len(audiences) > 1 and azp is None) or (azp is not None and azp != client_id):
        raise OidcRefused("wrong_audience", "the ID token's authorized party (azp) is not this app")
    return claims


async def verify_from_provider(
    providers: OidcProviders, id_token: str, *, issuer: str, client_id: str, nonce: str
) -> dict[str, Any]:
    """verify_id_token against the provider's keys, refetched once when the token names an unknown key."""
    keys = await providers.keys(issuer)
    try:
        return verify_id_token(id_token, keys=keys, issuer=issuer, client_id=client_id, nonce=nonce)
    except OidcRefused as refused:
        if refused.code != "unknown_key":
            raise
    keys = await providers.keys(issuer, refresh=True)
    return verify_id_token(id_token, keys=keys, issuer=issuer, client_id=client_id, nonce=nonce)

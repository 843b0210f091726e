"""An LTI 1.3 resource-link launch's ID token, checked (IMS LTI 1.3 core §5.1.3, Security Framework
§5.1.3): the flow its state names (single use), the platform's RS256 signature, issuer, audience
(azp when there are several), expiry and issue time, the nonce the login sent (and never seen before),
a registered deployment, the message type and LTI version."""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jws import extract_compact

from backend.accounts.lti.keys import KeysUnavailable, LtiKeys
from core.store.accounts import auth_flows
from core.store.accounts import lti as lti_store
from core.store.accounts.lti import Platform
from core.store.sql.access import Connection

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
LEEWAY_S = 60  # clocks of an LMS and of this server may differ by this much
MAX_AGE_S = 3600  # an ID token issued longer ago than this is refused, whatever its exp says


KEYS_UNAVAILABLE = (
    "The LMS's signing keys could not be read: ask your administrator to check this LMS's registration."
)


class LaunchRefused(Exception):
    """Why a launch is refused: `reason` is shown on the page (no secret, nothing fetched), `detail`
    goes only to the log."""

    def __init__(
        self, reason: str, status: int = 400, platform: Platform | None = None, detail: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.platform = platform
        self.detail = detail


@dataclass(frozen=True)
class Launch:
    platform: Platform
    subject: str
    email: str | None
    name: str | None
    roles: list[str]
    context_id: str
    context_title: str | None
    return_url: str | None
    claims: dict[str, Any]


async def spend_flow(conn: Connection, state: str) -> tuple[auth_flows.AuthFlow, Platform]:
    """The login this launch answers, spent (a second post of the same state finds nothing)."""
    if not state or state.startswith(lti_store.TICKET_PREFIX):
        raise LaunchRefused("unknown or replayed state")
    flow = await auth_flows.spend(conn, state=state, kind="lti")
    if flow is None or flow.platform_id is None:
        raise LaunchRefused("unknown or replayed state")
    platform = await lti_store.get_platform(conn, platform_id=flow.platform_id)
    if platform is None:
        raise LaunchRefused("the platform of this login is no longer registered")
    return flow, platform


async def verify(id_token: str, flow: auth_flows.AuthFlow, platform: Platform, keys: LtiKeys) -> Launch:
    """The launch the token carries, once every check passed (LaunchRefused otherwise). The nonce is not
    recorded here: record_nonce does that, on the caller's connection."""
    claims = await _verified_claims(id_token, platform, keys)
    _check_standard(claims, platform)
    if claims.get("nonce") != flow.nonce:
        raise LaunchRefused("the token's nonce is not the one this login sent", platform=platform)
    if claims.get(CLAIM + "deployment_id") not in platform.deployment_ids:
        raise LaunchRefused("unknown deployment", platform=platform)
    if claims.get(CLAIM + "message_type") != "LtiResourceLinkRequest":
        raise LaunchRefused("only resource-link launches are supported", platform=platform)
    if claims.get(CLAIM + "version") != "1.3.0":
        raise LaunchRefused("only LTI 1.3.0 is supported", platform=platform)
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise LaunchRefused(
            "the launch names no user (anonymous launches are not supported)", platform=platform
        )
    context = claims.get(CLAIM + "context")
    if not isinstance(context, dict) or not isinstance(context.get("id"), str) or not context["id"]:
        raise LaunchRefused("the launch names no course: launch studyAI from a course", platform=platform)
    roles = claims.get(CLAIM + "roles")
    presentation = claims.get(CLAIM + "launch_presentation")
    return Launch(
        platform=platform,
        subject=subject,
        email=_text(claims.get("email")),
        name=_text(claims.get("name")) or _joined(claims.get("given_name"), claims.get("family_name")),
        roles=[role for role in roles if isinstance(role, str)] if isinstance(roles, list) else [],
        context_id=context["id"],
        context_title=_text(context.get("title")) or _text(context.get("label")),
        return_url=_text(presentation.get("return_url")) if isinstance(presentation, dict) else None,
        claims=claims,
    )


async def record_nonce(conn: Connection, launch: Launch) -> None:
    """Records the token's nonce until it expires; a second launch with it is refused (a replay)."""
    expires_at = datetime.fromtimestamp(int(launch.claims["exp"]), UTC)
    nonce = str(launch.claims["nonce"])
    if not await lti_store.use_nonce(
        conn, platform_id=launch.platform.id, nonce=nonce, expires_at=expires_at
    ):
        raise LaunchRefused("nonce already used", platform=launch.platform)


async def _verified_claims(id_token: str, platform: Platform, keys: LtiKeys) -> dict[str, Any]:
    try:
        header = extract_compact(id_token.encode()).headers()
    except (JoseError, ValueError) as error:
        raise LaunchRefused(f"the id_token is not a JWT ({error})", platform=platform) from None
    if header.get("alg") != "RS256":
        raise LaunchRefused("the id_token must be signed with RS256", platform=platform)
    kid = header.get("kid") if isinstance(header.get("kid"), str) else None
    try:
        key_set = await keys.platform_keys(platform, kid=kid)
        token = jwt.decode(id_token, key_set, algorithms=["RS256"])
    except KeysUnavailable as error:
        raise LaunchRefused(KEYS_UNAVAILABLE, status=502, platform=platform, detail=str(error)) from None
    except JoseError:
        raise LaunchRefused(
            "bad signature: no key of the platform signed this token", platform=platform
        ) from None
    return dict(token.claims)


def _check_standard(claims: dict[str, Any], platform: Platform) -> None:
    if claims.get("iss") != platform.issuer:
        raise LaunchRefused("the token's issuer is not this platform's", platform=platform)
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if platform.client_id not in audiences:
        raise LaunchRefused("the token is not meant for this tool (audience)", platform=platform)
    if (len(audiences) > 1 or "azp" in claims) and claims.get("azp") != platform.client_id:
        raise LaunchRefused("the token's authorized party (azp) is not this tool", platform=platform)
    now = datetime.now(UTC).timestamp()
    exp, iat = claims.get("exp"), claims.get("iat")
    if not isinstance(exp, int | float) or not isinstance(iat, int | float):
        raise LaunchRefused("the token lacks exp or iat", platform=platform)
    if exp < now - LEEWAY_S:
        raise LaunchRefused("the token has expired", platform=platform)
    if iat > now + LEEWAY_S or iat < now - MAX_AGE_S:
        raise LaunchRefused("the token's issue time is not plausible", platform=platform)


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _joined(*parts: object) -> str | None:
    return " ".join(text for part in parts if (text := _text(part))) or None

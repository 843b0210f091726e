"""The third-party-initiated login (IMS Security Framework §5.1.1): the LMS sends the browser to
/lti/login with its issuer and hints; the tool keeps a flow (state, nonce) server-side and sends the
browser on to the platform's authorization endpoint, which form-posts the ID token to /lti/launch.
The flow is kept in the database, not a cookie: that post comes cross-site, without Lax cookies."""

from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from core.accounts.secrets import new_token
from core.store.accounts import auth_flows
from core.store.accounts import lti as lti_store
from core.store.accounts.auth_flows import AuthFlow
from core.store.sql.access import Connection


class LoginRefused(Exception):
    """Why a login initiation is refused (400)."""


@dataclass(frozen=True)
class LoginRequest:
    iss: str | None
    login_hint: str | None
    target_link_uri: str | None
    lti_message_hint: str | None = None
    client_id: str | None = None
    lti_deployment_id: str | None = None


async def start_login(conn: Connection, request: LoginRequest, *, launch_url: str) -> str:
    """The platform's authorization URL this browser goes to, with a new flow stored for its answer."""
    if not request.iss or not request.login_hint or not request.target_link_uri:
        raise LoginRefused("a login initiation needs iss, login_hint and target_link_uri")
    platform = await lti_store.find_platform(conn, issuer=request.iss, client_id=request.client_id)
    if platform is None:
        raise LoginRefused(
            "unknown platform: no registered LTI platform has this issuer"
            + (" and client id" if request.client_id else " (or it has several: send client_id)")
        )
    if request.lti_deployment_id is not None and request.lti_deployment_id not in platform.deployment_ids:
        raise LoginRefused("unknown deployment")
    state, nonce = new_token(), new_token()
    # target_link_uri is kept for the record only: the launch goes to the course's project, never to it.
    flow = AuthFlow(state, "lti", nonce, platform_id=platform.id, next_path=request.target_link_uri)
    await auth_flows.start(conn, flow)
    params = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": launch_url,
        "login_hint": request.login_hint,
        "state": state,
        "nonce": nonce,
    }
    if request.lti_message_hint is not None:
        params["lti_message_hint"] = request.lti_message_hint
    parts = urlsplit(platform.auth_login_url)
    query = "&".join(part for part in (parts.query, urlencode(params)) if part)
    return urlunsplit(parts._replace(query=query))

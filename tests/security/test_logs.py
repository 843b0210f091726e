"""No secret in any log line of the server process: every flow that hands out or takes a secret is
driven on the real server (its output, stdout and stderr, is one file), each secret collected, and the
whole log searched for each. The server runs as `studyai up` serves the API (uvicorn's access log off, the
app's own access line with secret paths redacted)."""

import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.lti_platform import launch_token, platform_key, platform_server
from tests.security.people import (
    NEW_PASSWORD,
    PASSWORD,
    Browser,
    Secrets,
    class_with_code,
    mail_to,
    new_email,
    password_account,
    unique,
)
from tests.security.sso_flows import lti_login, provider_user, register, ticket_of
from tests.security.stack import Stack


def token_in(text: str, name: str = "token") -> str:
    found = re.search(rf"{name}=([A-Za-z0-9_-]+)", text)
    assert found, text
    return found.group(1)


def test_no_token_code_or_state_reaches_any_log_line(stack: Stack, data_dir: Path) -> None:
    secrets = Secrets()
    secrets.add(PASSWORD, NEW_PASSWORD)
    # The set-up link `studyai up` announced at start (a fresh install): its token is in a 0600 file.
    setup_file = data_dir / "setup-link.txt"
    if setup_file.exists():
        secrets.add(token_in(setup_file.read_text()))

    # Password sign-in, its cookie and CSRF token; an API key.
    admin_email, _ = password_account(stack, "admin", admin=True)
    admin = Browser(stack)
    signed = admin.sign_in(admin_email)
    secrets.add(admin.http.cookies.get("studyai_session"), signed.json()["csrf_token"])
    secrets.add(admin.post("/me/keys", json={"name": "log test"}).json()["key"])

    # A class code: previewed (in the path), joined with a new account, mailed to a parent.
    project_id, code = class_with_code(stack, admin)
    secrets.add(code, code.replace("-", ""))
    student = Browser(stack)
    assert student.http.get(f"/join/{code}").status_code == 200
    student_email = new_email("student")
    body = {"code": code, "email": student_email, "password": PASSWORD}
    joined = student.signed_in(student.http.post("/join/signup", json=body))
    secrets.add(student.http.cookies.get("studyai_session"), joined.json()["session"]["csrf_token"])
    invitation_id = admin.get(f"/projects/{project_id}/invitations").json()[0]["id"]
    mailed = admin.post(
        f"/projects/{project_id}/invitations/{invitation_id}/email", json={"emails": [new_email("parent")]}
    )
    assert mailed.status_code == 200, mailed.text

    # A reset link by an administrator: checked and used.
    student_id = student.me()["id"]  # type: ignore[index]
    link = admin.post(f"/admin/users/{student_id}/reset-link").json()["link"]
    reset_token = token_in(link)
    secrets.add(reset_token)
    assert student.http.post("/auth/reset/check", json={"token": reset_token}).json() == {"valid": True}
    assert (
        student.http.post("/auth/reset", json={"token": reset_token, "password": NEW_PASSWORD}).status_code
        == 200
    )

    # "Forgot your password": the mailed token.
    assert Browser(stack).http.post("/auth/forgot", json={"email": admin_email}).status_code == 202
    [message] = mail_to(stack, admin_email)
    secrets.add(token_in(message.get_content()))

    # The school's login: state, nonce, the authorization code, the flow cookie.
    sub = unique("log-sub")
    provider_user(stack, sub, email=new_email("sso"), email_verified=True)
    sso = Browser(stack)
    started = sso.get("/auth/oidc/login", params={"next": "/app/#/projects"})
    query = parse_qs(urlsplit(started.headers["location"]).query)
    secrets.add(query["state"][0], query["nonce"][0], sso.http.cookies.get("studyai_oidc"))
    at_provider = httpx.post(started.headers["location"], data={"sub": sub}, timeout=10)
    callback = at_provider.headers["location"]
    secrets.add(token_in(callback, "code"))
    assert sso.http.get(callback.removeprefix(stack.base)).status_code == 302
    secrets.add(sso.http.cookies.get("studyai_session"))

    # An LTI launch: state, nonce, the ID token, the ticket (in a path, then posted).
    key = platform_key()
    with platform_server(lambda: {"keys": [key.as_dict(private=False)]}) as lms:
        issuer = f"https://lms-{time.time_ns()}.example"
        register(admin, issuer, f"{lms}/jwks")
        lti = Browser(stack)
        params = lti_login(stack, lti, issuer)
        id_token = launch_token(
            key, issuer=issuer, client_id="studyai", nonce=params["nonce"], tool=stack.base, deployment="d1"
        )
        secrets.add(params["state"], params["nonce"], id_token)
        page = lti.http.post(
            "/lti/launch", data={"id_token": id_token, "state": params["state"]}, headers={"Origin": issuer}
        )
        ticket = ticket_of(page)
        secrets.add(ticket)
        assert lti.http.get(f"/auth/ticket/{ticket}").status_code == 200
        assert lti.http.post("/auth/ticket", data={"ticket": ticket}).status_code == 303
        secrets.add(lti.http.cookies.get("studyai_session"))

    time.sleep(0.5)  # the last access lines are written as the answers finish
    log = stack.log()
    assert '"event": "http"' in log and "/join/[redacted]" in log and "/auth/ticket/[redacted]" in log
    leaked = sorted(secret[:12] + "…" for secret in secrets.found if secret in log)
    assert not leaked, f"secrets in the server's log: {leaked}"
    assert len(secrets.found) >= 20

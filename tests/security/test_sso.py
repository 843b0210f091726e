"""The school's login and the LMS as an attacker uses them, on the real server: an account signed up under
a teacher's address is not handed the teacher's school login with its password still working; linking a
school login needs proof of both; an LTI launch never switches a browser's identity without a click; and
an LMS's key set is fetched over https only, bounded, with errors kept from the page."""

import time

from tests.lti_platform import CLAIM, platform_key, platform_server
from tests.security.people import (
    PASSWORD,
    Browser,
    bearer,
    new_email,
    password_account,
    sql,
    teacher_with_class,
    unique,
)
from tests.security.sso_flows import launch, provider_user, register, school_sign_in, ticket_of
from tests.security.stack import Stack


def test_a_squatters_password_does_not_survive_the_teachers_school_login(stack: Stack) -> None:
    """A student with a class code signs up under the teacher's address (never verified) before the
    teacher ever signs in; the teacher's school login then links to that account and removes the
    password the student chose, with every session and key it opened."""
    _, _, code = teacher_with_class(stack, "head")
    victim_address = new_email("teacher")
    squatter = Browser(stack, "127.0.0.3")
    body = {"code": code, "email": victim_address, "password": PASSWORD}
    assert squatter.signed_in(squatter.http.post("/join/signup", json=body)).status_code == 201
    minted = squatter.post("/me/keys", json={"name": "backdoor"}).json()["key"]

    sub = unique("teacher-sub")
    provider_user(stack, sub, email=victim_address, email_verified=True, name="The Teacher")
    teacher = Browser(stack)
    landed = school_sign_in(stack, teacher, sub)
    assert landed.status_code == 302 and landed.headers["location"] == "/app/#/projects"
    assert teacher.me()["email"] == victim_address  # type: ignore[index]
    assert squatter.get("/auth/session").status_code == 401
    assert squatter.get("/projects", headers=bearer(minted)).status_code == 401
    assert Browser(stack, "127.0.0.3").sign_in(victim_address).status_code == 401


def test_linking_a_school_login_needs_both_proofs(stack: Stack) -> None:
    """From the account screen (signed in with the password, its CSRF token) the school login is linked
    and the password kept; a school login already linked to someone else is refused; without a session,
    or from another site, the link does not start."""
    email, _ = password_account(stack, "linker")
    owner = Browser(stack)
    owner.sign_in(email)
    sub = unique("linker-sub")
    provider_user(stack, sub, email=new_email("other-address"), email_verified=True)
    linked = school_sign_in(stack, owner, sub, link=True)
    assert linked.status_code == 302 and linked.headers["location"] == "/app/#/account"
    assert owner.get("/me").json()["school_login"] is True
    assert Browser(stack).sign_in(email).status_code == 200  # the password still works
    other_email, _ = password_account(stack, "someone-else")
    other = Browser(stack)
    other.sign_in(other_email)
    refused = school_sign_in(stack, other, sub, link=True)
    assert refused.headers["location"] == "/app/#/signin?error=linked_elsewhere"
    # Not signed in, or without the session's CSRF token (a cross-site form), the link does not start.
    assert Browser(stack).post("/auth/oidc/link").status_code == 401
    forged = other.http.post("/auth/oidc/link", headers={"Origin": "https://evil.example"})
    assert forged.status_code == 403
    assert other.http.post("/auth/oidc/link").status_code == 403  # no X-CSRF-Token


def test_an_lti_launch_never_switches_a_browsers_identity_without_a_click(stack: Stack) -> None:
    """A captured launch (its page, its ticket) opened in a victim's browser, outside any frame: the
    browser stays who it was until the person clicks Continue on our own page; a cross-site post of the
    ticket is refused."""
    admin_email, _ = password_account(stack, "admin", admin=True)
    admin = Browser(stack)
    admin.sign_in(admin_email)
    key = platform_key()
    with platform_server(lambda: {"keys": [key.as_dict(private=False)]}) as lms:
        issuer = f"https://lms-{time.time_ns()}.example"
        register(admin, issuer, f"{lms}/jwks")
        attacker = Browser(stack, "127.0.0.3")
        course = {CLAIM + "context": {"id": unique("course"), "title": "Trap"}}
        instructor = launch(stack, attacker, issuer, key, sub=unique("attacker"), **course)
        assert instructor.status_code == 200, instructor.text
        ticket = ticket_of(instructor)

        victim_email, _ = password_account(stack, "victim")
        victim = Browser(stack)
        victim.sign_in(victim_email)
        opened = victim.http.get(f"/auth/ticket/{ticket}")
        assert opened.status_code == 200 and "Continue as" in opened.text
        assert "set-cookie" not in opened.headers
        assert victim.me()["email"] == victim_email  # type: ignore[index]
        cross_site = victim.http.post(
            "/auth/ticket", data={"ticket": ticket}, headers={"Origin": "https://evil.example"}
        )
        assert cross_site.status_code == 403
        assert victim.me()["email"] == victim_email  # type: ignore[index]
        clicked = victim.http.post("/auth/ticket", data={"ticket": ticket})
        assert clicked.status_code == 303  # the person's own click on our page: now it switches


def test_an_lms_key_set_is_https_bounded_and_its_errors_stay_in_the_log(stack: Stack) -> None:
    admin_email, _ = password_account(stack, "admin", admin=True)
    admin = Browser(stack)
    admin.sign_in(admin_email)
    plain = {
        "name": "Plain",
        "issuer": f"https://plain-{time.time_ns()}.example",
        "client_id": "studyai",
        "auth_login_url": "https://lms.example/auth",
        "jwks_url": "http://lms.example/jwks",
        "deployment_ids": ["d1"],
    }
    refused = admin.post("/admin/lti/platforms", json=plain)
    assert refused.status_code == 422 and "https" in refused.text
    key = platform_key()
    huge = {"keys": [key.as_dict(private=False)], "padding": "x" * 200_000}
    with platform_server(lambda: huge) as lms:
        issuer = f"https://huge-{time.time_ns()}.example"
        register(admin, issuer, f"{lms}/jwks")
        page = launch(stack, Browser(stack), issuer, key)
        assert page.status_code == 502
        assert "could not be read" in page.text
        assert "bytes" not in page.text and "127.0.0.1" not in page.text and "jwks" not in page.text
    assert "larger than" in stack.log()  # the reason is the operator's, in the log


def test_an_invitation_by_email_reaches_only_a_proven_address(stack: Stack) -> None:
    """A teacher invites a colleague's address as owner before the colleague has an account; a student
    with a class code signs up under that address first. The squatter neither sees nor answers the
    invitation (its address is proven by nothing); the colleague, signing in with the school login that
    vouches for the address, takes the account over and accepts it."""
    head, project_id, code = teacher_with_class(stack, "head")
    colleague = new_email("colleague")
    invited = head.post(f"/projects/{project_id}/members", json={"email": colleague, "role": "owner"})
    assert invited.status_code == 202
    [pending] = sql(stack, "SELECT id FROM member_invitations WHERE email = %s", (colleague,))

    squatter = Browser(stack, "127.0.0.3")
    body = {"code": code, "email": colleague, "password": PASSWORD}
    assert squatter.signed_in(squatter.http.post("/join/signup", json=body)).status_code == 201
    assert squatter.get("/me/invitations").json() == []
    assert squatter.get("/me").json()["email_verified"] is False
    stolen = squatter.post(f"/me/invitations/{pending['id']}/accept")
    assert stolen.status_code == 404
    assert squatter.get(f"/projects/{project_id}").json()["role"] == "viewer"  # the code's role only

    sub = unique("colleague-sub")
    provider_user(stack, sub, email=colleague, email_verified=True)
    real = Browser(stack)
    assert school_sign_in(stack, real, sub).status_code == 302
    real.csrf = real.get("/auth/session").json()["csrf_token"]
    [received] = real.get("/me/invitations").json()
    accepted = real.post(f"/me/invitations/{received['id']}/accept")
    assert accepted.status_code == 200 and accepted.json()["role"] == "owner"
    assert squatter.get("/auth/session").status_code == 401  # the squatter's session ended with the takeover

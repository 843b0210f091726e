"""A curious student against a classmate's account, over HTTP on a real server process (a fresh install,
plain http): the four-step takeover of issue 39 and every other way a reset link or token could reach
someone it is not for. Each path is tried as the attacker would, and each is refused."""

import re
import time
from uuid import UUID

from tests.security.people import (
    NEW_PASSWORD,
    PASSWORD,
    Browser,
    api_key,
    bearer,
    class_with_code,
    join_with_new_account,
    mail_to,
    new_email,
    password_account,
    sql,
    teacher_with_class,
)
from tests.security.stack import Stack


def test_the_four_step_takeover_fails(stack: Stack) -> None:
    teacher, _, code = teacher_with_class(stack)
    victim, attacker = Browser(stack, "127.0.0.2"), Browser(stack, "127.0.0.3")
    victim_email, _ = join_with_new_account(victim, code, "victim")
    join_with_new_account(attacker, code, "attacker")
    victim_id = victim.me()["id"]  # type: ignore[index]

    # 1. Anyone may create a project (the default PROJECT_CREATORS=everyone).
    own = attacker.post("/projects", json={"name": "Mine"})
    assert own.status_code == 201
    own_id = own.json()["id"]
    # 2. Adding the classmate is an invitation they would have to accept: no membership, no user id, and
    #    the same answer as for an address nobody has.
    added = attacker.post(f"/projects/{own_id}/members", json={"email": victim_email, "role": "viewer"})
    nobody = attacker.post(
        f"/projects/{own_id}/members", json={"email": new_email("nobody"), "role": "viewer"}
    )
    assert added.status_code == nobody.status_code == 202
    assert set(added.json()) == set(nobody.json()) == {"email", "role", "expires_at", "mailed"}
    assert victim_id not in added.text
    members = attacker.get(f"/projects/{own_id}/members").json()
    assert [m["email"] for m in members["members"]] == [attacker.me()["email"]]  # type: ignore[index]
    # 3. No route makes a reset link for a member, and the administrators' one refuses a non-administrator.
    for path in (
        f"/projects/{own_id}/members/{victim_id}/reset-link",
        f"/admin/users/{victim_id}/reset-link",
    ):
        refused = attacker.post(path)
        assert refused.status_code in (403, 404, 405), (path, refused.text)
        assert "token" not in refused.text and "link" not in refused.json().get("detail", "").lower()
    # 4. With no link there is nothing to spend: the classmate's session and password still work.
    assert victim.get("/auth/session").status_code == 200
    assert Browser(stack, "127.0.0.2").sign_in(victim_email).status_code == 200
    assert (
        sql(stack, "SELECT count(*) AS n FROM one_time_tokens WHERE user_id = %s", (UUID(victim_id),))[0]["n"]
        == 0
    )
    for browser in (teacher, victim, attacker):
        browser.close()


def test_a_reset_token_reaches_only_the_accounts_mailbox_or_an_administrator(stack: Stack) -> None:
    owner_email, _ = password_account(stack, "owner", teacher=True)
    admin_email, _ = password_account(stack, "admin", admin=True)
    student_email, student_id = password_account(stack, "student")
    owner, admin, stranger = Browser(stack), Browser(stack), Browser(stack, "127.0.0.4")
    owner.sign_in(owner_email)
    admin.sign_in(admin_email)
    project_id, code = class_with_code(stack, owner)
    member = Browser(stack)
    member.sign_in(student_email)
    assert member.post("/join", json={"code": code}).status_code == 200

    # Forgot-password answers the same sentence for an account, a stranger's guess and nobody, and the
    # link goes to the account's own address only.
    answers = [
        stranger.post("/auth/forgot", json={"email": email}) for email in (student_email, new_email("nobody"))
    ]
    assert {a.status_code for a in answers} == {202} and answers[0].json() == answers[1].json()
    assert "token=" not in answers[0].text
    mailed = mail_to(stack, student_email)
    assert len(mailed) == 1 and "/app/#/reset?token=" in mailed[0].get_content()
    links = [(to, m) for to, m in stack.inbox.messages if "reset?token=" in m.get_content()]
    assert all(to == [str(m["To"])] for to, m in links)  # each link to its own account's address only
    # The owner, an editor or the member themself get no link for anyone; the administrator does.
    for caller in (owner, member):
        assert caller.post(f"/admin/users/{student_id}/reset-link").status_code == 403
        assert caller.post(f"/projects/{project_id}/members/{student_id}/reset-link").status_code in (
            404,
            405,
        )
    issued = admin.post(f"/admin/users/{student_id}/reset-link")
    assert issued.status_code == 200 and "token=" in issued.json()["link"]
    # A token is never echoed by the check, nor accepted from the URL path (it would reach access logs).
    token = re.search(r"token=([A-Za-z0-9_-]+)", issued.json()["link"]).group(1)  # type: ignore[union-attr]
    check = stranger.post("/auth/reset/check", json={"token": token})
    assert check.json() == {"valid": True} and token not in check.text
    assert stranger.get(f"/auth/reset/{token}").status_code in (404, 405)
    for browser in (owner, admin, stranger, member):
        browser.close()


def test_forgot_password_cannot_flood_a_mailbox(stack: Stack) -> None:
    """A stranger asking again and again: the same answer every time, at most FORGOT_PER_DAY (5) mails to
    the account a day."""
    email, _ = password_account(stack, "popular")
    stranger = Browser(stack, "127.0.0.5")
    answers = [stranger.post("/auth/forgot", json={"email": email}) for _ in range(7)]
    assert {(a.status_code, a.text) for a in answers} == {(202, answers[0].text)}
    assert len(mail_to(stack, email, count=5)) == 5
    time.sleep(1)
    assert len(stack.inbox.to(email)) == 5


def test_keys_and_sessions_end_with_the_accounts_doors(stack: Stack) -> None:
    """A session stolen once, and a key minted with it, stop at a password change, a reset, a disable
    (and stay stopped when the account is enabled again)."""
    admin_email, _ = password_account(stack, "admin", admin=True)
    admin = Browser(stack)
    admin.sign_in(admin_email)

    def stolen(email: str) -> tuple[Browser, str]:
        thief = Browser(stack, "127.0.0.3")
        assert thief.sign_in(email).status_code == 200
        minted = thief.post("/me/keys", json={"name": "mine now"})
        assert minted.status_code == 201
        return thief, minted.json()["key"]

    # A password change by the owner.
    email, user_id = password_account(stack, "changer")
    owner = Browser(stack)
    owner.sign_in(email)
    thief, key = stolen(email)
    changed = owner.post("/me/password", json={"current_password": PASSWORD, "new_password": NEW_PASSWORD})
    assert changed.status_code == 204
    assert thief.get("/projects").status_code == 401
    assert thief.get("/projects", headers=bearer(key)).status_code == 401
    assert owner.get("/projects").status_code == 200  # the session that changed it stays

    # A reset link used.
    email, user_id = password_account(stack, "forgetful")
    thief, key = stolen(email)
    old_key = api_key(stack, user_id)
    link = admin.post(f"/admin/users/{user_id}/reset-link").json()["link"]
    token = link.rsplit("token=", 1)[1]
    back = Browser(stack)
    assert (
        back.signed_in(
            back.http.post("/auth/reset", json={"token": token, "password": NEW_PASSWORD})
        ).status_code
        == 200
    )
    for headers in ({}, bearer(key), bearer(old_key)):
        assert thief.get("/projects", headers=headers).status_code == 401

    # Disabled, then enabled: nothing comes back.
    email, user_id = password_account(stack, "disabled")
    thief, key = stolen(email)
    assert admin.post(f"/admin/users/{user_id}/disable").status_code == 200
    assert admin.post(f"/admin/users/{user_id}/enable").status_code == 200
    assert thief.get("/projects").status_code == 401
    assert thief.get("/projects", headers=bearer(key)).status_code == 401
    assert Browser(stack).sign_in(email).status_code == 200  # the owner signs in anew


def test_a_set_up_that_takes_over_an_account_ends_its_sessions_and_keys(stack: Stack) -> None:
    """The first-run set-up with an email that has an account makes it the administrator with a new
    password; whatever the old password or its keys opened ends."""
    email, user_id = password_account(stack, "early")
    early = Browser(stack, "127.0.0.3")
    early.sign_in(email)
    key = api_key(stack, user_id)
    demoted = [
        row["id"] for row in sql(stack, "UPDATE users SET is_admin = false WHERE is_admin RETURNING id")
    ]
    try:
        link = _setup_link(stack)
        setup = Browser(stack)
        body = {"token": link.rsplit("token=", 1)[1], "email": email, "password": NEW_PASSWORD}
        assert setup.signed_in(setup.http.post("/auth/setup", json=body)).status_code == 201
        assert early.get("/projects").status_code == 401
        assert early.get("/projects", headers=bearer(key)).status_code == 401
    finally:
        sql(stack, "UPDATE users SET is_admin = true WHERE id = ANY(%s)", (demoted,))


def _setup_link(stack: Stack) -> str:
    from backend.cli.user_admin import setup_link
    from core.settings import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    link = setup_link(stack.database_url, settings, stack.base)
    assert link is not None
    return link


def test_a_first_password_on_a_school_account_needs_fresh_proof(stack: Stack) -> None:
    """An account that signs in only through its school: a stolen key, or a session of an hour ago,
    cannot give it a password (which would outlive the school's say)."""
    email = new_email("sso")
    [row] = sql(stack, "INSERT INTO users (email) VALUES (%s) RETURNING id", (email,))
    key = api_key(stack, row["id"])
    thief = Browser(stack, "127.0.0.3")
    refused = thief.post("/me/password", json={"new_password": NEW_PASSWORD}, headers=bearer(key))
    assert refused.status_code == 403
    assert (
        sql(stack, "SELECT password_hash FROM users WHERE id = %s", (row["id"],))[0]["password_hash"] is None
    )

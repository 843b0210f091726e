"""Budgets that stop guessers, not classmates, on the real server from two loopback addresses (two
machines): a student guessing a teacher's password, or keys, or invitation codes, is cut off; the teacher
signing in from elsewhere, a classmate at the same address with a valid session, key or code, are not."""

from tests.security.people import (
    NEW_PASSWORD,
    PASSWORD,
    Browser,
    api_key,
    bearer,
    fresh_address,
    password_account,
    teacher_with_class,
)
from tests.security.stack import Stack

LOGIN_BUDGET = 10  # RATE_LIMIT_LOGIN_FAILURES' default: 10 per 15 minutes, per account and address


def test_wrong_passwords_lock_out_the_guesser_not_the_teacher(stack: Stack) -> None:
    teacher_email, _ = password_account(stack, "teacher")
    pupil, school = fresh_address(), fresh_address()
    guesser = Browser(stack, pupil)
    statuses = [guesser.sign_in(teacher_email, f"guess number {n}").status_code for n in range(30)]
    assert statuses[:LOGIN_BUDGET] == [401] * LOGIN_BUDGET and set(statuses[LOGIN_BUDGET:]) == {429}
    # The right password from the guesser's address is refused too (it is not even checked there) ...
    assert guesser.sign_in(teacher_email).status_code == 429
    # ... while the teacher, at another address, signs in, and a classmate at the guesser's address too.
    assert Browser(stack, school).sign_in(teacher_email).status_code == 200
    classmate_email, _ = password_account(stack, "classmate")
    assert Browser(stack, pupil).sign_in(classmate_email).status_code == 200


def test_wrong_keys_never_lock_out_a_valid_session_or_key_at_the_same_address(stack: Stack) -> None:
    nat = fresh_address()
    email, user_id = password_account(stack, "classmate")
    key = api_key(stack, user_id)
    classmate = Browser(stack, nat)
    classmate.sign_in(email)
    guesser = Browser(stack, nat)
    statuses = [
        guesser.get("/projects", headers=bearer(f"sk-studyai-guess-{n}")).status_code for n in range(35)
    ]
    assert statuses[0] == 401 and statuses[-1] == 429  # RATE_LIMIT_AUTH_FAILURES: 30 a minute
    assert classmate.get("/projects").status_code == 200
    assert classmate.post("/projects", json={"name": "still works"}).status_code == 201
    assert Browser(stack, nat).get("/projects", headers=bearer(key)).status_code == 200


def test_wrong_codes_spend_the_guessers_own_budget(stack: Stack) -> None:
    _, project_id, code = teacher_with_class(stack)
    nat = fresh_address()
    guesser_email, _ = password_account(stack, "guesser")
    classmate_email, _ = password_account(stack, "classmate")
    guesser, classmate = Browser(stack, nat), Browser(stack, nat)
    guesser.sign_in(guesser_email)
    classmate.sign_in(classmate_email)
    guesses = [guesser.post("/join", json={"code": f"ZZZZZ-ZZZ{n:02d}"[:11]}).status_code for n in range(25)]
    assert guesses[0] == 404 and guesses[-1] == 429
    assert classmate.post("/join", json={"code": "ZZZZZ-ZZZZY"}).status_code == 404  # a typo: not 429
    for member in (classmate, guesser):
        joined = member.post("/join", json={"code": code})
        assert joined.status_code == 200 and joined.json()["project_id"] == project_id


def test_a_changed_password_is_not_guessable_through_the_change_form(stack: Stack) -> None:
    """A stolen session cannot guess the current password on /me/password either: it spends the same
    (account, address) budget as the sign-in."""
    email, _ = password_account(stack, "owner")
    thief = Browser(stack, fresh_address())
    thief.sign_in(email)
    statuses = [
        thief.post(
            "/me/password", json={"current_password": f"guess {n}", "new_password": NEW_PASSWORD}
        ).status_code
        for n in range(LOGIN_BUDGET + 1)
    ]
    assert statuses[:LOGIN_BUDGET] == [403] * LOGIN_BUDGET and statuses[-1] == 429
    right = thief.post("/me/password", json={"current_password": PASSWORD, "new_password": NEW_PASSWORD})
    assert right.status_code == 429

"""Who has an account does not leak, by status, body or time (median of ≥ 20 interleaved tries within
20 %): adding a member by e-mail, signing in with a wrong password, "forgot your password". Sign-up is the
one door that cannot hide it without a mail round trip (docs/SECURITY.md): there a taken e-mail costs the
prober the same time and spends the same budget as a wrong code."""

import statistics
import time
from collections.abc import Callable

import httpx

from tests.security.people import (
    PASSWORD,
    Browser,
    class_with_code,
    fresh_address,
    new_email,
    password_account,
)
from tests.security.stack import Stack

TRIES = 25


def timed(call: Callable[[int], httpx.Response], n: int) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = call(n)
    return time.perf_counter() - started, response


def compare(existing: Callable[[int], httpx.Response], nobody: Callable[[int], httpx.Response]) -> None:
    """Interleaved tries of both; the same status and body shape every time, medians within 20 %."""
    times: dict[str, list[float]] = {"existing": [], "nobody": []}
    shapes: set[tuple[int, tuple[str, ...]]] = set()
    for n in range(TRIES):
        for name, call in (("existing", existing), ("nobody", nobody)):
            took, response = timed(call, n)
            times[name].append(took)
            body = response.json()
            shapes.add((response.status_code, tuple(sorted(body)) if isinstance(body, dict) else ()))
    assert len(shapes) == 1, shapes
    a, b = statistics.median(times["existing"]), statistics.median(times["nobody"])
    print(f"median {a * 1000:.1f} ms with an account, {b * 1000:.1f} ms without")  # shown with -s
    assert abs(a - b) <= 0.2 * max(a, b), (a, b)


def test_adding_a_member_answers_alike_for_an_account_and_for_nobody(stack: Stack) -> None:
    owner_email, _ = password_account(stack, "owner")
    owner = Browser(stack)
    owner.sign_in(owner_email)
    project_id = owner.post("/projects", json={"name": "Probe"}).json()["id"]
    accounts = [password_account(stack, f"member{n}")[0] for n in range(TRIES)]

    def invite(email: str) -> httpx.Response:
        return owner.post(f"/projects/{project_id}/members", json={"email": email, "role": "viewer"})

    compare(lambda n: invite(accounts[n]), lambda n: invite(new_email("nobody")))
    existing, nobody = invite(accounts[0]), invite(new_email("nobody"))
    assert set(existing.json()) == set(nobody.json()) and "user_id" not in existing.text


def test_a_wrong_password_answers_alike_for_an_account_and_for_nobody(stack: Stack) -> None:
    email, _ = password_account(stack, "known")

    def login(who: str) -> httpx.Response:
        # A fresh address per try: the budgets would otherwise answer 429 (alike for both, but not this).
        return Browser(stack, fresh_address()).http.post(
            "/auth/login", json={"email": who, "password": "wrong guess"}
        )

    compare(lambda n: login(email), lambda n: login(new_email("nobody")))
    assert login(email).json() == login(new_email("nobody")).json()


def test_forgot_password_answers_alike_for_an_account_and_for_nobody(stack: Stack) -> None:
    email, _ = password_account(stack, "forgetful")

    def forgot(who: str) -> httpx.Response:
        return Browser(stack, fresh_address()).http.post("/auth/forgot", json={"email": who})

    compare(lambda n: forgot(email), lambda n: forgot(new_email("nobody")))


def test_sign_up_with_a_taken_email_costs_the_prober_time_and_budget(stack: Stack) -> None:
    """The one answer that differs (409): the password is hashed before the email is looked up, so it
    takes as long as a sign-up that succeeds, and it spends the address's join budget like a wrong code
    (429 after RATE_LIMIT_JOIN_FAILURES)."""
    owner_email, _ = password_account(stack, "owner")
    owner = Browser(stack)
    owner.sign_in(owner_email)
    _, code = class_with_code(stack, owner)
    taken, _ = password_account(stack, "taken")
    prober = Browser(stack, fresh_address())
    times: dict[str, list[float]] = {"taken": [], "free": []}

    def sign_up(email: str) -> httpx.Response:
        return prober.http.post("/join/signup", json={"code": code, "email": email, "password": PASSWORD})

    for _ in range(9):
        for name, email in (("taken", taken), ("free", new_email("free"))):
            took, response = timed(lambda _n, email=email: sign_up(email), 0)
            assert response.status_code == (409 if name == "taken" else 201), response.text
            times[name].append(took)
    a, b = statistics.median(times["taken"]), statistics.median(times["free"])
    assert a >= 0.5 * b, (a, b)  # Argon2 either way: the taken answer is no shortcut
    statuses = [
        prober.http.post(
            "/join/signup", json={"code": code, "email": taken, "password": PASSWORD}
        ).status_code
        for _ in range(20)
    ]
    assert statuses[-1] == 429 and 409 in statuses  # 9 taken probes above, 20 a window

"""The people of the attacker's tests, on the real stack: accounts made the way each door makes them,
browsers that keep their cookie and CSRF token, and the secrets each flow hands out (collected, so the log
test can look for every one of them)."""

import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx
import psycopg
from psycopg.rows import dict_row

from core.accounts.passwords import hash_password
from core.store.accounts.api_keys import KEY_PREFIX, hash_key
from tests.security.stack import Stack

PASSWORD = "correct horse battery staple 42"
NEW_PASSWORD = "a different long passphrase 7"
_HASH = hash_password(PASSWORD)  # one Argon2 hash for every account made here: they share the password


def unique(name: str) -> str:
    return f"{name}-{time.time_ns()}-{secrets.token_hex(2)}"


def new_email(name: str) -> str:
    return f"{unique(name)}@school.example"


def fresh_address() -> str:
    """A loopback address of its own (127.x.y.z): budgets per address live in the session's Redis."""
    return f"127.{secrets.randbelow(250) + 2}.{secrets.randbelow(256)}.{secrets.randbelow(250) + 2}"


def sql(stack: Stack, query: str, params: Any = ()) -> list[dict[str, Any]]:
    with psycopg.connect(stack.database_url, autocommit=True, row_factory=dict_row) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


@dataclass
class Secrets:
    """Every secret a test's flows handled: the log test looks for each in every log line."""

    found: set[str] = field(default_factory=set)

    def add(self, *values: str | None) -> None:
        self.found.update(value for value in values if value and len(value) >= 8)


@dataclass
class Browser:
    """One person's browser on the stack: its cookies, its CSRF token, its loopback address."""

    stack: Stack
    address: str = "127.0.0.1"
    csrf: str = ""
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = self.stack.client(self.address)

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if method != "GET" and self.csrf:
            headers.setdefault("X-CSRF-Token", self.csrf)
        return self.http.request(method, path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def patch(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", path, **kwargs)

    def signed_in(self, response: httpx.Response) -> httpx.Response:
        """Keeps the session's CSRF token from a sign-in answer."""
        if response.status_code in (200, 201):
            body = response.json()
            self.csrf = (body.get("session") or body)["csrf_token"]
        return response

    def sign_in(self, email: str, password: str = PASSWORD) -> httpx.Response:
        return self.signed_in(self.http.post("/auth/login", json={"email": email, "password": password}))

    def me(self) -> dict[str, Any] | None:
        response = self.get("/auth/session")
        return response.json()["user"] if response.status_code == 200 else None


def password_account(
    stack: Stack, name: str, *, admin: bool = False, teacher: bool = False
) -> tuple[str, UUID]:
    """An account with PASSWORD, as an administrator or the command line makes one: (email, id)."""
    email = new_email(name)
    [row] = sql(
        stack,
        "INSERT INTO users (email, password_hash, is_admin, is_teacher, password_changed_at)"
        " VALUES (%s, %s, %s, %s, now()) RETURNING id",
        (email, _HASH, admin, teacher),
    )
    return email, row["id"]


def api_key(stack: Stack, user_id: UUID) -> str:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    sql(
        stack,
        "INSERT INTO api_keys (user_id, key_hash, key_prefix, name) VALUES (%s, %s, %s, 'test')",
        (user_id, hash_key(key), key[:16]),
    )
    return key


def mail_to(stack: Stack, address: str, count: int = 1, timeout: float = 10) -> list[Any]:
    """The messages to `address` once there are `count` (mail goes out after the answer)."""
    deadline = time.monotonic() + timeout
    while len(found := stack.inbox.to(address)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def class_with_code(stack: Stack, teacher: Browser, name: str = "Class 7C") -> tuple[str, str]:
    """The teacher's new project and an invitation code to it: (project id, code)."""
    created = teacher.post("/projects", json={"name": name})
    assert created.status_code == 201, created.text
    project_id = created.json()["id"]
    invitation = teacher.post(f"/projects/{project_id}/invitations", json={})
    assert invitation.status_code == 201, invitation.text
    return project_id, invitation.json()["code"]


def teacher_with_class(stack: Stack, name: str = "teacher") -> tuple[Browser, str, str]:
    """A teacher's account with PASSWORD, signed in, with a new project and an invitation code to it:
    (the teacher's browser, project id, code)."""
    email, _ = password_account(stack, name, teacher=True)
    teacher = Browser(stack)
    teacher.sign_in(email)
    return (teacher, *class_with_code(stack, teacher))


def join_with_new_account(browser: Browser, code: str, name: str) -> tuple[str, dict[str, Any]]:
    """A student who joins with the class code on a phone, creating a plain account: (email, answer)."""
    email = new_email(name)
    body = {"code": code, "email": email, "password": PASSWORD}
    joined = browser.signed_in(browser.http.post("/join/signup", json=body))
    assert joined.status_code == 201, joined.text
    return email, joined.json()

"""API keys (list, create, revoke, expiry, the CLI), members (list, role, remove, leave, the last owner)
and the security log, through the API and `studyai users` on the real database."""

import re
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import security_events
from tests.conftest import Caller, UserFactory, add_member, create_project, own_app, studyai

Conn = psycopg.AsyncConnection[dict[str, Any]]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def users(make_user: UserFactory, *names: str) -> list[Caller]:
    return [await make_user(name) for name in names]


async def project_with(client: httpx.AsyncClient, owner: Caller, *members: tuple[Caller, str]) -> str:
    """The owner's new project, each (member, role) in it."""
    project_id = await create_project(client, owner)
    for member, role in members:
        await add_member(client, owner, project_id, member, role)
    return project_id


async def works(client: httpx.AsyncClient, headers: dict[str, str], project_id: str) -> list[int]:
    """Status codes of a few routes, reads and writes, with these headers."""
    return [
        (await client.get("/projects", headers=headers)).status_code,
        (await client.get(f"/projects/{project_id}", headers=headers)).status_code,
        (await client.get(f"/projects/{project_id}/documents", headers=headers)).status_code,
        (await client.get("/me/keys", headers=headers)).status_code,
        (await client.post("/projects", json={"name": "x"}, headers=headers)).status_code,
    ]


async def test_keys_are_listed_created_and_revoked(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    owner, stranger = await make_user("keys"), await make_user("keys-stranger")
    project_id = await create_project(client, owner)
    listed = await client.get("/me/keys", headers=owner)
    assert listed.status_code == 200
    (first,) = listed.json()
    assert first["status"] == "active" and first["prefix"].startswith("sk-studyai-")
    assert first["last_used_at"] is not None  # this very request
    assert set(first) == {
        "id",
        "name",
        "prefix",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
        "status",
    }

    created = await client.post("/me/keys", json={"name": "laptop", "expires_in_days": 30}, headers=owner)
    assert created.status_code == 201, created.text
    key = created.json()["key"]
    assert key.startswith(created.json()["prefix"]) and created.json()["name"] == "laptop"
    expires = datetime.fromisoformat(created.json()["expires_at"])
    assert timedelta(days=29) < expires - datetime.now(UTC) <= timedelta(days=30)
    assert await works(client, bearer(key), project_id) == [200, 200, 200, 200, 201]
    listing = await client.get("/me/keys", headers=bearer(key))
    assert [k["name"] for k in listing.json()] == ["laptop", "default"]
    assert key not in listing.text and "key_hash" not in listing.text

    # Revoked: refused at once on every route; the other key goes on working.
    new_id = created.json()["id"]
    assert (await client.delete(f"/me/keys/{new_id}", headers=owner)).status_code == 204
    assert await works(client, bearer(key), project_id) == [401] * 5
    assert (await client.get("/me/keys", headers=owner)).json()[0]["status"] == "revoked"
    assert (await client.delete(f"/me/keys/{new_id}", headers=owner)).status_code == 204  # idempotent
    assert await works(client, owner, project_id) == [200, 200, 200, 200, 201]

    # Another user's key id is not found, and their key stays live.
    (theirs,) = (await client.get("/me/keys", headers=stranger)).json()
    assert (await client.delete(f"/me/keys/{theirs['id']}", headers=owner)).status_code == 404
    assert (await client.delete(f"/me/keys/{uuid.uuid4()}", headers=owner)).status_code == 404
    assert (await client.get("/projects", headers=stranger)).status_code == 200

    # A key can revoke itself.
    assert (await client.delete(f"/me/keys/{first['id']}", headers=owner)).status_code == 204
    assert (await client.get("/projects", headers=owner)).status_code == 401


async def test_expired_keys_fail_and_expiry_is_validated(
    client: httpx.AsyncClient, make_user: UserFactory, db: Conn
) -> None:
    user = await make_user("expiry")
    created = await client.post("/me/keys", json={"expires_in_days": 1}, headers=user)
    assert created.status_code == 201
    key = created.json()["key"]
    assert (await client.get("/projects", headers=bearer(key))).status_code == 200
    await db.execute(
        "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = %s", (created.json()["id"],)
    )
    response = await client.get("/projects", headers=bearer(key))
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    keys = {k["id"]: k for k in (await client.get("/me/keys", headers=user)).json()}
    assert keys[created.json()["id"]]["status"] == "expired"

    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    soon = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    for body in (
        {"expires_at": past},
        {"expires_at": soon, "expires_in_days": 2},
        {"expires_in_days": 0},
        {"expires_at": "2030-01-01T00:00:00"},  # no time zone
        {"name": "x" * 101},
        {"key": "sk-studyai-chosen-by-me"},  # a key is never chosen by the client
    ):
        assert (await client.post("/me/keys", json=body, headers=user)).status_code == 422, body
    dated = await client.post("/me/keys", json={"expires_at": soon}, headers=user)
    assert dated.status_code == 201
    assert datetime.fromisoformat(dated.json()["expires_at"]) == datetime.fromisoformat(soon)


async def test_last_used_is_written_at_most_once_a_minute(
    client: httpx.AsyncClient, make_user: UserFactory, db: Conn
) -> None:
    user = await make_user("last-used")
    await client.get("/projects", headers=user)
    uid = user.id

    async def last_used() -> datetime:
        row = await (
            await db.execute("SELECT last_used_at FROM api_keys WHERE user_id = %s", (uid,))
        ).fetchone()
        return row["last_used_at"]  # type: ignore[index]

    first = await last_used()
    await client.get("/projects", headers=user)
    assert await last_used() == first
    await db.execute(
        "UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE user_id = %s", (uid,)
    )
    stale = await last_used()
    await client.get("/projects", headers=user)
    assert await last_used() > stale


async def test_live_keys_per_user_are_capped(
    settings: Settings, services: ServiceUrls, make_user: UserFactory
) -> None:
    user = await make_user("many-keys")
    async with own_app(settings.with_values({"API_KEYS_MAX_PER_USER": 2}), services) as (_, http):
        second = await http.post("/me/keys", json={"name": "second"}, headers=user)
        assert second.status_code == 201
        assert (await http.post("/me/keys", json={"name": "third"}, headers=user)).status_code == 409
        assert (await http.delete(f"/me/keys/{second.json()['id']}", headers=user)).status_code == 204
        assert (await http.post("/me/keys", json={"name": "third"}, headers=user)).status_code == 201


async def test_key_events_are_logged_for_their_owner(
    client: httpx.AsyncClient, make_user: UserFactory
) -> None:
    user, other = await make_user("key-events"), await make_user("key-events-other")
    created = await client.post(
        "/me/keys", json={"name": "phone"}, headers={**user, "X-Request-ID": "keys-made-1"}
    )
    key_id = created.json()["id"]
    revoked = await client.delete(f"/me/keys/{key_id}", headers={**user, "X-Request-ID": "keys-gone-1"})
    assert revoked.status_code == 204
    response = await client.get("/me/audit", headers=user)
    assert response.status_code == 200
    events = response.json()
    assert [(e["action"], e["request_id"], e["target_id"]) for e in events] == [
        ("key.revoked", "keys-gone-1", key_id),
        ("key.created", "keys-made-1", key_id),
    ]
    assert all(e["actor_email"] == user.email and e["project_id"] is None for e in events)
    assert created.json()["key"] not in response.text
    assert (await client.get("/me/audit", headers=other)).json() == []
    assert (await client.get("/me/audit?limit=201", headers=user)).status_code == 422


def studyai_users(services: ServiceUrls, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return studyai("users", *args, data_dir=data_dir, database_url=services.database_url)


async def test_the_users_cli_refuses_existing_emails_and_revokes(
    client: httpx.AsyncClient, services: ServiceUrls, data_dir: Path, db: Conn
) -> None:
    email = f"cli-{uuid.uuid4().hex[:8]}@example.org"
    created = studyai_users(services, data_dir, "create", email)
    assert created.returncode == 0, created.stderr
    first = created.stdout.strip().splitlines()[-1]

    again = studyai_users(services, data_dir, "create", email.upper())
    assert again.returncode == 1 and "already exists" in again.stderr and "--add-key" in again.stderr
    assert "sk-studyai-" not in again.stdout
    count = "SELECT count(*) AS n FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.email = %s"
    assert (await (await db.execute(count, (email,))).fetchone())["n"] == 1  # type: ignore[index]

    added = studyai_users(services, data_dir, "create", email, "--add-key", "--key-name", "tablet")
    assert added.returncode == 0, added.stderr
    second = added.stdout.strip().splitlines()[-1]
    assert second != first
    for key in (first, second):
        assert (await client.get("/projects", headers=bearer(key))).status_code == 200

    # Revoke by the prefix that `users keys` and GET /me/keys show; then every key of the email.
    (tablet,) = [
        k for k in (await client.get("/me/keys", headers=bearer(first))).json() if k["name"] == "tablet"
    ]
    revoked = studyai_users(services, data_dir, "revoke", tablet["prefix"])
    assert revoked.returncode == 0, revoked.stderr
    assert tablet["id"] in revoked.stdout
    assert (await client.get("/projects", headers=bearer(second))).status_code == 401
    assert (await client.get("/projects", headers=bearer(first))).status_code == 200
    everything = studyai_users(services, data_dir, "revoke", "--email", email, "--all")
    assert everything.returncode == 0, everything.stderr
    assert (await client.get("/projects", headers=bearer(first))).status_code == 401
    unknown = studyai_users(services, data_dir, "revoke", "sk-studyai-doesnotexist")
    assert unknown.returncode == 1 and "no key" in unknown.stderr

    events = await (
        await db.execute(
            "SELECT e.action, e.actor_user_id, e.details FROM security_events e JOIN users u"
            " ON u.id = e.target_user_id WHERE u.email = %s ORDER BY e.id",
            (email,),
        )
    ).fetchall()
    assert [e["action"] for e in events] == [
        "user.created",
        "key.created",
        "key.created",
        "key.revoked",
        "key.revoked",
    ]
    assert all(e["actor_user_id"] is None and e["details"]["via"] == "cli" for e in events)


async def test_members_are_listed_by_role(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    owner, editor, student, classmate, outsider = await users(
        make_user, "list-owner", "list-editor", "list-s1", "list-s2", "out"
    )
    project_id = await project_with(
        client, owner, (editor, "editor"), (student, "viewer"), (classmate, "viewer")
    )
    url = f"/projects/{project_id}/members"

    for staff in (owner, editor):
        listing = (await client.get(url, headers=staff)).json()
        assert [m["email"] for m in listing["members"]][:2] == [owner.email, editor.email]
        assert {m["email"] for m in listing["members"]} == {
            owner.email,
            editor.email,
            student.email,
            classmate.email,
        }
    # A student sees the staff and themself, never a classmate; the counts are the whole class's.
    seen = (await client.get(url, headers=student)).json()
    assert {m["email"] for m in seen["members"]} == {owner.email, editor.email, student.email}
    assert seen["counts"] == {"owner": 1, "editor": 1, "viewer": 2} and seen["total"] == 4
    assert classmate.email not in str(seen)
    page = (await client.get(f"{url}?limit=1&offset=1", headers=owner)).json()
    assert [m["email"] for m in page["members"]] == [editor.email]
    assert (await client.get(f"{url}?limit=201", headers=owner)).status_code == 422
    assert (await client.get(url, headers=outsider)).status_code == 404


async def test_roles_change_and_the_last_owner_stays(
    client: httpx.AsyncClient, make_user: UserFactory
) -> None:
    owner, helper, student = await users(make_user, "role-owner", "role-helper", "role-s")
    project_id = await project_with(client, owner, (helper, "viewer"), (student, "viewer"))
    url = f"/projects/{project_id}/members"

    async def set_role(member: Caller, role: str, caller: Caller) -> int:
        """The status of the caller's PATCH of the member's role."""
        return (await client.patch(f"{url}/{member.id}", json={"role": role}, headers=caller)).status_code

    promoted = await client.patch(f"{url}/{helper.id}", json={"role": "editor"}, headers=owner)
    assert promoted.status_code == 200 and promoted.json()["role"] == "editor"
    assert (await client.get(f"/projects/{project_id}", headers=helper)).json()["role"] == "editor"
    # Only owners change roles; nobody can become owner by asking.
    for caller in (helper, student):
        assert await set_role(student, "owner", caller) == 403
    assert (
        await client.patch(f"{url}/{uuid.uuid4()}", json={"role": "editor"}, headers=owner)
    ).status_code == 404
    assert await set_role(student, "admin", owner) == 422
    # The only owner cannot demote themself by PATCH; inviting their own email as a viewer and
    # accepting it never lowers their role either.
    assert await set_role(owner, "editor", owner) == 409
    response = await client.post(url, json={"email": owner.email, "role": "viewer"}, headers=owner)
    assert response.status_code == 202
    [own] = (await client.get("/me/invitations", headers=owner)).json()
    accepted = await client.post(f"/me/invitations/{own['id']}/accept", headers=owner)
    assert accepted.status_code == 200 and accepted.json()["role"] == "owner"
    # With a second owner, the first may step down.
    assert await set_role(helper, "owner", owner) == 200
    assert await set_role(owner, "viewer", owner) == 200
    assert (await client.get(f"/projects/{project_id}", headers=owner)).json()["role"] == "viewer"
    assert await set_role(helper, "editor", helper) == 409


async def test_removed_and_leaving_members_lose_the_project_at_once(
    client: httpx.AsyncClient, make_user: UserFactory
) -> None:
    owner, editor, student, outsider = await users(make_user, "rm-owner", "rm-editor", "rm-s", "rm-outsider")
    project_id = await project_with(client, owner, (editor, "editor"), (student, "viewer"))
    url = f"/projects/{project_id}/members"

    assert (await client.delete(f"{url}/{student.id}", headers=editor)).status_code == 403
    assert (await client.delete(f"{url}/{student.id}", headers=outsider)).status_code == 404
    assert (
        await client.patch(f"{url}/{student.id}", json={"role": "owner"}, headers=outsider)
    ).status_code == 404
    assert (await client.get(f"/projects/{project_id}", headers=student)).status_code == 200
    assert (await client.delete(f"{url}/{student.id}", headers=owner)).status_code == 204
    for path in ("", "/documents", "/members", "/questions"):
        assert (await client.get(f"/projects/{project_id}{path}", headers=student)).status_code == 404, path
    assert project_id not in (await client.get("/projects", headers=student)).text
    assert (await client.delete(f"{url}/{student.id}", headers=student)).status_code == 404
    assert (await client.delete(f"{url}/{student.id}", headers=owner)).status_code == 404

    # Leaving: a member removes themself; the last owner cannot.
    assert (await client.delete(f"{url}/{editor.id}", headers=editor)).status_code == 204
    assert (await client.get(f"/projects/{project_id}", headers=editor)).status_code == 404
    assert (await client.delete(f"{url}/{owner.id}", headers=owner)).status_code == 409
    assert (await client.get(f"/projects/{project_id}", headers=owner)).json()["role"] == "owner"


async def test_security_actions_are_logged_for_owners(
    client: httpx.AsyncClient, make_user: UserFactory, db: Conn
) -> None:
    owner, editor, student, outsider = await users(
        make_user, "log-owner", "log-editor", "log-s", "log-outsider"
    )
    project_id = await create_project(client, owner)
    editor_id, student_id, owner_id = [str(c.id) for c in (editor, student, owner)]
    url = f"/projects/{project_id}"

    def as_(caller: Caller, rid: str) -> dict[str, str]:
        return {**caller, "X-Request-ID": rid}

    async def invite_and_accept(member: Caller, role: str, rid: str) -> None:
        body = {"email": member.email, "role": role}
        invited = await client.post(f"{url}/members", json=body, headers=as_(owner, f"log-add{rid}"))
        assert invited.status_code == 202
        [pending] = (await client.get("/me/invitations", headers=member)).json()
        accept = f"/me/invitations/{pending['id']}/accept"
        assert (await client.post(accept, headers=as_(member, f"log-accept{rid}"))).status_code == 200

    await invite_and_accept(editor, "editor", "")
    await invite_and_accept(student, "editor", "-2")
    role = await client.patch(
        f"{url}/members/{student_id}", json={"role": "viewer"}, headers=as_(owner, "log-role")
    )
    assert role.status_code == 200
    files = {"file": ("secret.md", b"# Exam answers\n\nThe answer is 42.", "text/markdown")}
    uploaded = await client.post(f"{url}/documents", files=files, headers=editor)
    assert uploaded.status_code == 202
    document_id = uploaded.json()["document_id"]
    deleted = await client.delete(f"{url}/documents/{document_id}", headers=as_(editor, "log-doc"))
    assert deleted.status_code == 204
    patch = {"description": "private notes", "groundedness_sample_rate": 0.1}
    assert (await client.patch(url, json=patch, headers=as_(editor, "log-settings"))).status_code == 200
    assert (
        await client.delete(f"{url}/members/{student_id}", headers=as_(owner, "log-remove"))
    ).status_code == 204

    response = await client.get(f"{url}/audit", headers=owner)
    assert response.status_code == 200
    events = response.json()
    assert [(e["action"], e["actor_user_id"], e["request_id"]) for e in events[:8]] == [
        ("member.removed", owner_id, "log-remove"),
        ("project.updated", editor_id, "log-settings"),
        ("document.deleted", editor_id, "log-doc"),
        ("member.role_changed", owner_id, "log-role"),
        ("invitation.accepted", student_id, "log-accept-2"),
        ("invitation.sent", owner_id, "log-add-2"),
        ("invitation.accepted", editor_id, "log-accept"),
        ("invitation.sent", owner_id, "log-add"),
    ]
    assert events[-1]["action"] == "project.created"
    by_action = {e["action"]: e for e in events}
    assert by_action["invitation.sent"]["details"] == {
        "role": "editor",
        "email": editor.email,
        "mailed": False,
    }
    assert by_action["invitation.accepted"]["details"] == {"role": "editor"}
    assert by_action["member.role_changed"]["details"] == {"role": "viewer", "previous_role": "editor"}
    assert by_action["member.removed"]["target_user_id"] == student_id
    assert by_action["document.deleted"]["target_id"] == document_id
    assert by_action["project.updated"]["details"] == {
        "changed": ["description", "groundedness_sample_rate"],
        "groundedness_sample_rate": 0.1,
    }
    assert "private notes" not in response.text and "The answer is" not in response.text
    # Owners only: an editor is refused, anyone else sees no project at all.
    assert (await client.get(f"{url}/audit", headers=editor)).status_code == 403
    assert (await client.get(f"{url}/audit", headers=outsider)).status_code == 404
    assert (await client.get(f"{url}/audit", headers=student)).status_code == 404
    assert (await client.get(f"{url}/audit?limit=201", headers=owner)).status_code == 422
    assert len((await client.get(f"{url}/audit?limit=2&offset=1", headers=owner)).json()) == 2

    # Leaving is logged; so is the project's deletion, which the log outlives (for the operator).
    assert (
        await client.delete(f"{url}/members/{editor_id}", headers=as_(editor, "log-leave"))
    ).status_code == 204
    assert (await client.get(f"{url}/audit", headers=owner)).json()[0]["action"] == "member.left"
    assert (await client.delete(url, headers=as_(owner, "log-delete"))).status_code == 204
    rows = await (
        await db.execute(
            "SELECT action, request_id FROM security_events WHERE project_id = %s ORDER BY id DESC",
            (project_id,),
        )
    ).fetchall()
    assert rows[0] == {"action": "project.deleted", "request_id": "log-delete"}
    assert len(rows) == len(events) + 2


async def test_the_known_actions_are_the_databases(db: Any) -> None:
    """core/store/accounts/security_events.ACTIONS and the table's CHECK list the same actions."""
    cur = await db.execute(
        "SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint"
        " WHERE conname = 'security_events_action_check'"
    )
    definition = (await cur.fetchone())["definition"]
    assert set(re.findall(r"'([a-z_.]+)'", definition)) == set(security_events.ACTIONS)

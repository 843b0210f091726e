"""Mail through a real local SMTP server (aiosmtpd): a reset link reaches the account, an invitation
reaches each address with its join link and code; without SMTP_HOST, or without PUBLIC_URL (a mailed link
is never built from the request's Host), the invitation route answers 409."""

import secrets
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from backend.accounts.service.codes import CODES_MAIL_OFF as MAIL_OFF
from core.accounts.codes import ALPHABET, display
from core.store.accounts import accounts
from tests.backend.conftest import Api
from tests.conftest import UserFactory, add_member, changed_settings, create_project
from tests.mail_server import Inbox, smtp_server


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


PUBLIC_URL = "https://study.school.example"


def mail_settings(port: int) -> dict[str, Any]:
    return {
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": port,
        "SMTP_SECURITY": "none",
        "SMTP_FROM": "study@school.example",
        "PUBLIC_URL": PUBLIC_URL,
    }


async def invitation(db: Any, project_id: str, owner_id: UUID, **fields: Any) -> tuple[UUID, str]:
    code = "".join(secrets.choice(ALPHABET) for _ in range(10))
    row = await (
        await db.execute(
            "INSERT INTO invitations (project_id, code, role, created_by, expires_at, max_uses, revoked_at)"
            " VALUES (%s, %s, 'viewer', %s, now() + interval '7 days', 30, %s) RETURNING id",
            (project_id, code, owner_id, fields.get("revoked_at")),
        )
    ).fetchone()
    return row["id"], code


async def test_a_reset_link_is_mailed_to_the_account(
    smtp: tuple[Inbox, int], api: Api, db: Any, make_user: UserFactory
) -> None:
    inbox, port = smtp
    admin = await make_user("admin")
    await accounts.set_admin(db, user_id=admin.id)
    target = await make_user("mailed")
    with changed_settings(api.app, **mail_settings(port)):
        issued = await api.http.post(f"/admin/users/{target.id}/reset-link", headers=admin)
    assert issued.status_code == 200, issued.text
    out = issued.json()
    assert out["mailed"] is True and out["link"].startswith("https://study.school.example/app/#/reset?token=")
    [message] = inbox.to(target.email)
    assert message["From"] == "study@school.example" and "password" in message["Subject"]
    assert out["link"] in message.get_content()


async def test_an_owner_mails_an_invitation_with_its_link_and_code(
    smtp: tuple[Inbox, int], api: Api, db: Any, make_user: UserFactory
) -> None:
    inbox, port = smtp
    owner = await make_user("owner")
    editor = await make_user("editor")
    project_id = await create_project(api.http, owner, name="Geography 9B")
    await add_member(api.http, owner, project_id, editor, "editor")
    invitation_id, code = await invitation(db, project_id, owner.id)
    path = f"/projects/{project_id}/invitations/{invitation_id}/email"
    stamp = time.time_ns()
    emails = [f"ana-{stamp}@school.example", f"ben-{stamp}@school.example"]

    unset = await api.http.post(path, json={"emails": emails}, headers=owner)
    assert unset.status_code == 409 and unset.json()["detail"] == MAIL_OFF
    with changed_settings(api.app, **(mail_settings(port) | {"PUBLIC_URL": None})):  # no Host-built link
        no_base = await api.http.post(path, json={"emails": emails}, headers=owner)
        assert no_base.status_code == 409 and no_base.json()["detail"] == MAIL_OFF
    with changed_settings(api.app, **mail_settings(port)):
        sent = await api.http.post(path, json={"emails": [*emails, emails[0].upper()]}, headers=owner)
        assert sent.status_code == 200, sent.text
        assert sent.json() == {"sent": 2}
        assert (await api.http.post(path, json={"emails": emails}, headers=editor)).status_code == 403
        assert (
            await api.http.post(path, json={"emails": ["not-an-address"]}, headers=owner)
        ).status_code == 422
        assert (await api.http.post(path, json={"emails": []}, headers=owner)).status_code == 422
        revoked_id, _ = await invitation(db, project_id, owner.id, revoked_at="2020-01-01T00:00:00Z")
        revoked = f"/projects/{project_id}/invitations/{revoked_id}/email"
        assert (await api.http.post(revoked, json={"emails": emails}, headers=owner)).status_code == 404
        other_project = await create_project(api.http, owner, name="Another")
        elsewhere = f"/projects/{other_project}/invitations/{invitation_id}/email"
        assert (await api.http.post(elsewhere, json={"emails": emails}, headers=owner)).status_code == 404

    link = f"{PUBLIC_URL}/app/#/join/{display(code)}"
    for email in emails:
        [message] = inbox.to(email)
        text = message.get_content()
        assert message["To"] == email and "Geography 9B" in message["Subject"]
        assert link in text and display(code) in text
    assert len(inbox.messages) == 2

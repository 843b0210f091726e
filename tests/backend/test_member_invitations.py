"""Invitations addressed to one person, over HTTP: an owner invites an address (202, the same answer for
an address with an account and one without), lists and withdraws pending ones; only the invitee, signed in
with a proven address, sees and answers theirs; accepting never lowers a role; answered once."""

import asyncio
import time
import uuid
from typing import Any

from tests.backend.conftest import Api
from tests.conftest import UserFactory, create_project


def address(name: str) -> str:
    return f"{name}-{time.time_ns()}@school.example"


async def test_an_owner_invites_lists_and_withdraws(api: Api, make_user: UserFactory) -> None:
    owner, editor, invitee = await make_user("owner"), await make_user("editor"), await make_user("invitee")
    project_id = await create_project(api.http, owner, name="Chemistry")
    url = f"/projects/{project_id}/members"
    sent = await api.http.post(url, json={"email": invitee.email.upper(), "role": "editor"}, headers=owner)
    nobody = await api.http.post(url, json={"email": address("nobody")}, headers=owner)
    assert sent.status_code == nobody.status_code == 202
    assert sent.json()["email"] == invitee.email and sent.json()["role"] == "editor"
    again = await api.http.post(url, json={"email": invitee.email, "role": "viewer"}, headers=owner)
    assert again.status_code == 202  # replaces the pending one's role
    pending = (await api.http.get(f"{url}/invitations", headers=owner)).json()
    assert {(p["email"], p["role"]) for p in pending} == {
        (invitee.email, "viewer"),
        (nobody.json()["email"], "viewer"),
    }
    assert set(pending[0]) == {"id", "email", "role", "invited_by", "expires_at", "created_at"}
    [mine] = (await api.http.get("/me/invitations", headers=invitee)).json()
    assert (
        mine["project_id"] == project_id and mine["project_name"] == "Chemistry" and mine["role"] == "viewer"
    )
    # Only owners see and withdraw; an editor of the project is refused, a stranger sees no project.
    withdrawn = await api.http.delete(f"{url}/invitations/{mine['id']}", headers=owner)
    assert withdrawn.status_code == 204
    assert (await api.http.delete(f"{url}/invitations/{mine['id']}", headers=owner)).status_code == 404
    assert (await api.http.delete(f"{url}/invitations/{uuid.uuid4()}", headers=owner)).status_code == 404
    assert (await api.http.get("/me/invitations", headers=invitee)).json() == []
    for refused, status in ((editor, 404), (invitee, 404)):
        assert (await api.http.get(f"{url}/invitations", headers=refused)).status_code == status


async def test_the_invitee_accepts_or_declines_once(api: Api, db: Any, make_user: UserFactory) -> None:
    owner, invitee, other = await make_user("owner"), await make_user("invitee"), await make_user("other")
    project_id = await create_project(api.http, owner, name="Physics")
    url = f"/projects/{project_id}/members"
    assert (
        await api.http.post(url, json={"email": invitee.email, "role": "editor"}, headers=owner)
    ).status_code == 202
    [mine] = (await api.http.get("/me/invitations", headers=invitee)).json()
    # Someone else cannot answer it, by id or otherwise.
    assert (await api.http.post(f"/me/invitations/{mine['id']}/accept", headers=other)).status_code == 404
    assert (await api.http.delete(f"/me/invitations/{mine['id']}", headers=other)).status_code == 404
    accepted = await api.http.post(f"/me/invitations/{mine['id']}/accept", headers=invitee)
    assert accepted.status_code == 200 and accepted.json() == {
        "project_id": project_id,
        "role": "editor",
        "project_name": "Physics",
    }
    assert (await api.http.post(f"/me/invitations/{mine['id']}/accept", headers=invitee)).status_code == 404
    # A viewer invitation accepted later never lowers the editor's role; a declined one leaves it.
    for answer in ("accept", "decline"):
        assert (await api.http.post(url, json={"email": invitee.email}, headers=owner)).status_code == 202
        [again] = (await api.http.get("/me/invitations", headers=invitee)).json()
        if answer == "accept":
            response = await api.http.post(f"/me/invitations/{again['id']}/accept", headers=invitee)
            assert response.status_code == 200 and response.json()["role"] == "editor"
        else:
            assert (
                await api.http.delete(f"/me/invitations/{again['id']}", headers=invitee)
            ).status_code == 204
    assert (await api.http.get(f"/projects/{project_id}", headers=invitee)).json()["role"] == "editor"
    actions = [
        row["action"]
        for row in await (
            await db.execute(
                "SELECT action FROM security_events WHERE project_id = %s AND action LIKE 'invitation.%%'"
                " ORDER BY id",
                (project_id,),
            )
        ).fetchall()
    ]
    assert actions == [
        "invitation.sent",
        "invitation.accepted",
        "invitation.sent",
        "invitation.accepted",
        "invitation.sent",
        "invitation.declined",
    ]


async def test_two_answers_at_once_make_one(api: Api, make_user: UserFactory) -> None:
    owner, invitee = await make_user("owner"), await make_user("invitee")
    project_id = await create_project(api.http, owner)
    await api.http.post(f"/projects/{project_id}/members", json={"email": invitee.email}, headers=owner)
    [mine] = (await api.http.get("/me/invitations", headers=invitee)).json()
    path = f"/me/invitations/{mine['id']}"
    answers = await asyncio.gather(
        api.http.post(f"{path}/accept", headers=invitee), api.http.delete(path, headers=invitee)
    )
    assert sorted(a.status_code for a in answers) in ([200, 404], [204, 404])

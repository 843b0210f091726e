"""Auth, projects, members and roles through the API on the real database."""

import httpx

from tests.conftest import UserFactory, add_member, create_project


async def test_health_needs_no_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_routes_need_a_valid_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/projects")).status_code == 401
    bad = {"Authorization": "Bearer sk-studyai-not-a-key"}
    response = await client.get("/projects", headers=bad)
    assert response.status_code == 401
    assert "Invalid" in response.json()["detail"]


async def test_project_lifecycle(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    owner = await make_user("owner")
    project_id = await create_project(client, owner, name="Rust", language="en")
    listed = (await client.get("/projects", headers=owner)).json()
    assert [p["id"] for p in listed] == [project_id]
    assert listed[0]["role"] == "owner"

    patched = await client.patch(f"/projects/{project_id}", json={"description": "ch. 1-9"}, headers=owner)
    assert patched.status_code == 200
    assert patched.json()["description"] == "ch. 1-9"
    assert patched.json()["language"] == "en"

    assert (await client.delete(f"/projects/{project_id}", headers=owner)).status_code == 204
    assert (await client.get(f"/projects/{project_id}", headers=owner)).status_code == 404


async def test_invalid_language_is_rejected(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    owner = await make_user()
    response = await client.post("/projects", json={"name": "x", "language": "fr"}, headers=owner)
    assert response.status_code == 422


async def test_roles(client: httpx.AsyncClient, make_user: UserFactory) -> None:
    owner, viewer, editor = await make_user("owner"), await make_user("viewer"), await make_user("editor")
    project_id = await create_project(client, owner)

    for member, role in ((viewer, "viewer"), (editor, "editor")):
        await add_member(client, owner, project_id, member, role)

    assert (await client.get(f"/projects/{project_id}", headers=viewer)).json()["role"] == "viewer"
    # A viewer reads but cannot write.
    assert (await client.get(f"/projects/{project_id}/documents", headers=viewer)).status_code == 200
    assert (
        await client.patch(f"/projects/{project_id}", json={"name": "v"}, headers=viewer)
    ).status_code == 403
    upload = await client.post(
        f"/projects/{project_id}/documents",
        files={"file": ("a.md", b"# A\n\ntext", "text/markdown")},
        headers=viewer,
    )
    assert upload.status_code == 403
    # An editor writes but cannot delete the project or add members.
    assert (
        await client.patch(f"/projects/{project_id}", json={"name": "e"}, headers=editor)
    ).status_code == 200
    assert (await client.delete(f"/projects/{project_id}", headers=editor)).status_code == 403
    response = await client.post(
        f"/projects/{project_id}/members", json={"email": viewer.email, "role": "owner"}, headers=editor
    )
    assert response.status_code == 403
    # An address nobody has is answered as a known one (an invitation: no account enumeration), and
    # makes nobody a member.
    response = await client.post(
        f"/projects/{project_id}/members", json={"email": "nobody@example.org"}, headers=owner
    )
    assert response.status_code == 202 and set(response.json()) == {"email", "role", "expires_at", "mailed"}
    members = (await client.get(f"/projects/{project_id}/members", headers=owner)).json()
    assert "nobody@example.org" not in [m["email"] for m in members["members"]]

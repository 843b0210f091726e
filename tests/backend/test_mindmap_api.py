"""GET /projects/{id}/mindmap and GET /projects/{id}/documents/{id}/mindmap over HTTP, on real material:
Rust-book chapters (English) and Pense em Python chapters (Portuguese), indexed by the session's worker.
Every node of every map leads to at least one passage of that project (its chunk ids are the project's
live chunks, of the document it says), the concepts come from the stored plans when there are some
(a plan's retired chunk ids dropped) and else from the headings, and only members see a map."""

import subprocess
from typing import Any
from uuid import UUID

import httpx
import pytest

from core.store.runs import plans
from tests.conftest import SHARED_DATA, Caller, Conn, UserFactory, create_project, index_documents

RUST = SHARED_DATA / "rust-book" / "src"
RUST_CHAPTERS = (
    "ch04-00-understanding-ownership.md",
    "ch04-01-what-is-ownership.md",
    "ch04-02-references-and-borrowing.md",
    "ch04-03-fixing-ownership-errors.md",
    "ch04-04-slices.md",
    "ch04-05-ownership-recap.md",
)
PENSE = SHARED_DATA / "pense-python"
PENSE_CHAPTERS = ("03-funcoes.md", "06-funcoes-result.md", "10-listas.md")


async def indexed(
    http: httpx.AsyncClient, owner: Caller, folder: Any, names: tuple[str, ...], language: str
) -> tuple[str, dict[str, str]]:
    project = await create_project(http, owner, name=f"map {language}", language=language)
    ids = await index_documents(http, owner, project, {name: (folder / name).read_text() for name in names})
    return project, ids


async def project_chunks(http: httpx.AsyncClient, owner: Caller, project: str) -> dict[int, str]:
    """Every live chunk of the project -> its document id, read over the API."""
    documents = (await http.get(f"/projects/{project}/documents", headers=owner)).json()
    chunks: dict[int, str] = {}
    for document in documents:
        response = await http.get(
            f"/projects/{project}/documents/{document['id']}/chunks?limit=1000", headers=owner
        )
        assert response.status_code == 200, response.text
        chunks |= {row["id"]: document["id"] for row in response.json()}
    return chunks


def assert_traceable(found: dict[str, Any], chunks: dict[int, str]) -> None:
    """Every node names at least one passage, each a live chunk of the project in the document the
    passage says; parents come before their children; links join a concept to a node of the map."""
    assert found["nodes"], found
    seen: set[str] = set()
    for node in found["nodes"]:
        assert node["parent"] is None or node["parent"] in seen, node
        seen.add(node["id"])
        assert node["passages"], node
        assert node["chunk_count"] >= len(node["passages"])
        for passage in node["passages"]:
            assert chunks.get(passage["chunk_id"]) == passage["document_id"], (node["label"], passage)
        if node["document_id"] is not None and node["kind"] != "concept":
            assert {passage["document_id"] for passage in node["passages"]} == {node["document_id"]}
    assert sum(node["parent"] is None for node in found["nodes"]) == 1
    kinds = {node["id"]: node["kind"] for node in found["nodes"]}
    for link in found["links"]:
        assert kinds[link["source"]] == "concept" and kinds[link["target"]] in ("document", "section"), link
    assert len(found["nodes"]) <= found["node_cap"]


@pytest.fixture(scope="module")
async def rust(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> tuple[Caller, str, dict[str, str]]:
    owner = await make_user("mapper")
    project, ids = await indexed(client, owner, RUST, RUST_CHAPTERS, "en")
    return owner, project, ids


@pytest.fixture(scope="module")
async def pense(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> tuple[Caller, str, dict[str, str]]:
    owner = await make_user("mapeador")
    project, ids = await indexed(client, owner, PENSE, PENSE_CHAPTERS, "pt")
    return owner, project, ids


async def test_the_rust_chapters_map_leads_every_node_to_a_passage(
    client: httpx.AsyncClient, rust: tuple[Caller, str, dict[str, str]]
) -> None:
    owner, project, ids = rust
    response = await client.get(f"/projects/{project}/mindmap", headers=owner)
    assert response.status_code == 200, response.text
    found = response.json()
    assert_traceable(found, await project_chunks(client, owner, project))
    nodes = found["nodes"]
    assert nodes[0]["kind"] == "project" and nodes[0]["label"] == "map en"
    documents = [node for node in nodes if node["kind"] == "document"]
    assert {node["document_id"] for node in documents} == set(ids.values())
    labels = {node["label"] for node in nodes}
    # A chapter file's own title is its document's label; its headings are the sections under it.
    assert {"What Is Ownership?", "References and Borrowing", "The Slice Type"} <= labels
    assert {"String Slices", "Other Slices", "References Are Non-Owning Pointers"} <= labels
    # No plan yet: the concepts are terms shared by the headings, each linked to the sections it names.
    assert found["concepts_from"] == "headings"
    concepts = {node["label"]: node for node in nodes if node["kind"] == "concept"}
    assert {"References", "Slices"} <= set(concepts), sorted(concepts)
    targets = {link["target"] for link in found["links"] if link["source"] == concepts["References"]["id"]}
    linked = {node["label"] for node in nodes if node["id"] in targets}
    assert {"References Are Non-Owning Pointers", "References Change Permissions on Places"} <= linked, linked


async def test_a_documents_map_is_that_document_alone(
    client: httpx.AsyncClient, rust: tuple[Caller, str, dict[str, str]]
) -> None:
    owner, project, ids = rust
    document = ids["ch04-02-references-and-borrowing.md"]
    response = await client.get(f"/projects/{project}/documents/{document}/mindmap", headers=owner)
    assert response.status_code == 200, response.text
    found = response.json()
    assert found["document_id"] == document
    chunks = await project_chunks(client, owner, project)
    assert_traceable(found, {chunk: doc for chunk, doc in chunks.items() if doc == document})
    assert (
        found["nodes"][0]["kind"] == "document" and found["nodes"][0]["label"] == "References and Borrowing"
    )


async def test_the_pense_em_python_map_leads_every_node_to_a_passage(
    client: httpx.AsyncClient, pense: tuple[Caller, str, dict[str, str]]
) -> None:
    owner, project, ids = pense
    response = await client.get(f"/projects/{project}/mindmap", headers=owner)
    assert response.status_code == 200, response.text
    found = response.json()
    assert_traceable(found, await project_chunks(client, owner, project))
    labels = {node["label"] for node in found["nodes"]}
    assert {"Capítulo 3: Funções", "Capítulo 10: Listas"} <= labels, sorted(labels)
    # "Exercícios" and "Glossário" close every chapter: the book's frame, not a concept.
    concepts = {node["label"] for node in found["nodes"] if node["kind"] == "concept"}
    assert "Funções" in concepts and not {"Exercícios", "Glossário", "Capítulo"} & concepts, concepts
    for document in ids.values():
        response = await client.get(f"/projects/{project}/documents/{document}/mindmap", headers=owner)
        assert response.status_code == 200, response.text
        assert_traceable(response.json(), await project_chunks(client, owner, project))


async def test_stored_plans_are_the_concepts_with_their_live_chunks(
    client: httpx.AsyncClient, db: Conn, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> None:
    owner = await make_user("planner")
    project, ids = await indexed(client, owner, RUST, ("ch04-04-slices.md",), "en")
    chunks = await project_chunks(client, owner, project)
    live = sorted(chunks)
    retired = max(live) + 10_000_000  # a chunk id a reindex took away: not a passage any more
    outline = {
        "query": "slices",
        "sections": [
            {"title": "String slices", "goal": "", "chunk_ids": [retired, live[1], live[2]]},
            {"title": "Gone", "goal": "", "chunk_ids": [retired]},
        ],
    }
    await plans.create_plan(db, project_id=UUID(project), user_id=owner.id, topic="slices", outline=outline)  # type: ignore[arg-type]
    found = (await client.get(f"/projects/{project}/mindmap", headers=owner)).json()
    assert_traceable(found, chunks)
    assert found["concepts_from"] == "plans"
    [concept] = [node for node in found["nodes"] if node["kind"] == "concept"]
    assert concept["label"] == "String slices"
    assert [p["chunk_id"] for p in concept["passages"]] == [live[1], live[2]]
    assert concept["document_id"] == ids["ch04-04-slices.md"]


async def test_only_members_see_a_map_of_this_projects_documents(
    client: httpx.AsyncClient, rust: tuple[Caller, str, dict[str, str]], make_user: UserFactory
) -> None:
    owner, project, ids = rust
    document = next(iter(ids.values()))
    stranger = await make_user("stranger")
    for path in (f"/projects/{project}/mindmap", f"/projects/{project}/documents/{document}/mindmap"):
        assert (await client.get(path, headers=stranger)).status_code == 404
    # Another project's document through this project's URL: not found, as any unknown id.
    other = await create_project(client, stranger, name="other")
    response = await client.get(f"/projects/{other}/documents/{document}/mindmap", headers=stranger)
    assert response.status_code == 404
    own = await create_project(client, owner, name="owner's other")
    response = await client.get(f"/projects/{own}/documents/{document}/mindmap", headers=owner)
    assert response.status_code == 404
    empty = (await client.get(f"/projects/{own}/mindmap", headers=owner)).json()
    assert empty["nodes"] == [] and empty["links"] == [] and empty["concepts_from"] == "none"

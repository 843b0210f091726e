"""POST /projects/{id}/search on a small real project: hybrid results, debug lists, filters,
profiles, and that edited or deleted text is never returned."""

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from core.runtime.services import ServiceUrls
from tests.conftest import (
    Caller,
    UserFactory,
    create_project,
    index_documents,
    studyai,
    upload,
    wait_for_job,
)

# Every section is longer than CHUNK_MIN_CHARS, so each one is a chunk of its own.
DOCUMENTS = {
    "ownership.md": (
        "# Ownership\n\n## Moves\n\nWhen a String is assigned to another variable the value is moved, and the"
        " first variable can no longer be used. This is how Rust frees heap memory without a garbage"
        " collector: exactly one owner drops the value when it goes out of scope, so nothing is freed"
        " twice.\n\n## Borrowing\n\nA reference borrows a value without taking ownership. Mutable references"
        " are exclusive: only one may exist at a time, and no shared reference may exist alongside it. The"
        " borrow checker enforces these rules when the program is compiled.\n"
    ),
    "structs.md": (
        "# Structs\n\n## Defining\n\nA struct groups named fields, like a User with an email and a"
        " sign-in count. Each field has a name and a type, and an instance gives every field a concrete"
        " value; field init shorthand saves repeating a name.\n\n## Methods\n\nMethods are defined in an"
        " impl block and take self as their first parameter. They are called with dot syntax on an"
        " instance, and associated functions without self are often used as constructors.\n"
    ),
    "tuplas.md": (
        "# Tuplas\n\n## Imutabilidade\n\nTuplas são sequências imutáveis de valores; para trocar um"
        " elemento é"
        " preciso criar uma nova tupla. Por serem imutáveis, as tuplas podem ser usadas como chaves de"
        " dicionários, ao contrário das listas.\n\n## Atribuição\n\nA atribuição de tuplas permite trocar os"
        " valores de duas variáveis numa só instrução, sem variável temporária: o lado direito é avaliado"
        " antes de qualquer atribuição.\n"
    ),
    "glossary.txt": (
        "Heap: memory allocated at run time, whose size may be unknown when the program is compiled.\n\n"
        "Stack: memory for values of a known, fixed size, pushed and popped in order.\n\n"
        "Garbage collector: a runtime that finds and frees memory that is no longer in use.\n"
    ),
}


@dataclass
class SearchProject:
    headers: Caller
    project_id: str
    document_ids: dict[str, str]


async def search_project(
    client: httpx.AsyncClient, make_user: UserFactory, user: str, name: str
) -> SearchProject:
    """A new user's project with DOCUMENTS indexed (by the session's worker)."""
    headers = await make_user(user)
    project_id = await create_project(client, headers, name=name)
    return SearchProject(headers, project_id, await index_documents(client, headers, project_id, DOCUMENTS))


@pytest.fixture(scope="module")
async def project(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> SearchProject:
    return await search_project(client, make_user, "searcher", "search")


async def search(client: httpx.AsyncClient, project: SearchProject, **body: Any) -> httpx.Response:
    return await client.post(f"/projects/{project.project_id}/search", json=body, headers=project.headers)


async def test_hybrid_search_finds_the_right_section(
    client: httpx.AsyncClient, project: SearchProject
) -> None:
    response = await search(client, project, query="what happens when a value is moved to another variable?")
    assert response.status_code == 200, response.text
    body = response.json()
    top = body["results"][0]
    assert top["document_id"] == project.document_ids["ownership.md"]
    assert top["section_path"] == ["Ownership", "Moves"]
    assert top["provenance"]["dense_rank"] is not None
    assert body["reranker"] == "blend"
    assert body["debug"] is None
    assert [hit["rank"] for hit in body["results"]] == list(range(1, len(body["results"]) + 1))


async def test_portuguese_query_matches_portuguese_chunks(
    client: httpx.AsyncClient, project: SearchProject
) -> None:
    body = (
        await search(client, project, query="como trocar os valores de duas variáveis?", debug=True)
    ).json()
    assert body["results"][0]["document_id"] == project.document_ids["tuplas.md"]
    lexical = body["debug"]["lexical"]
    assert lexical, "the Portuguese chunks must be matched lexically in their own language"


async def test_debug_lays_open_every_stage(client: httpx.AsyncClient, project: SearchProject) -> None:
    body = (await search(client, project, query="garbage collector heap memory", debug=True)).json()
    debug = body["debug"]
    assert debug["dense"] and debug["lexical"] and debug["fused"] and debug["reranked"]
    fused_ids = {c["chunk_id"] for c in debug["fused"]}
    assert {c["chunk_id"] for c in debug["dense"]} | {c["chunk_id"] for c in debug["lexical"]} == fused_ids
    # Lexical scores are BM25: positive and decreasing down the list.
    scores = [c["provenance"]["bm25_score"] for c in debug["lexical"]]
    assert all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)
    assert [c["chunk_id"] for c in debug["reranked"]][: len(body["results"])] == [
        hit["chunk_id"] for hit in body["results"]
    ]
    for stage in ("embed_ms", "dense_ms", "lexical_ms", "fuse_ms", "rerank_ms", "total_ms"):
        assert debug["timings_ms"][stage] >= 0


async def test_filters(
    client: httpx.AsyncClient, project: SearchProject, db: psycopg.AsyncConnection
) -> None:
    query = "memory"
    only_structs = await search(
        client, project, query=query, filters={"document_id": project.document_ids["structs.md"]}
    )
    assert {h["document_id"] for h in only_structs.json()["results"]} == {project.document_ids["structs.md"]}

    section = await search(client, project, query=query, filters={"section": "Ownership > Borrowing"})
    assert [h["section_path"] for h in section.json()["results"]] == [["Ownership", "Borrowing"]]

    text_only = await search(client, project, query=query, filters={"source_type": "text"})
    assert {h["filename"] for h in text_only.json()["results"]} == {"glossary.txt"}

    await db.execute(
        "UPDATE documents SET kind = 'generated' WHERE id = %s", (project.document_ids["structs.md"],)
    )
    try:
        generated = await search(client, project, query=query, filters={"kind": "generated"})
        assert {h["document_id"] for h in generated.json()["results"]} == {project.document_ids["structs.md"]}
        uploaded = await search(client, project, query=query, filters={"kind": "uploaded"})
        assert project.document_ids["structs.md"] not in {
            h["document_id"] for h in uploaded.json()["results"]
        }
    finally:
        await db.execute(
            "UPDATE documents SET kind = 'uploaded' WHERE id = %s", (project.document_ids["structs.md"],)
        )


async def test_profiles(client: httpx.AsyncClient, project: SearchProject) -> None:
    qa = (await search(client, project, query="memory", profile="qa", top_k=50)).json()
    assert len(qa["results"]) <= 10
    evaluator = await search(client, project, query="memory", profile="evaluator")
    assert evaluator.status_code == 422
    assert "document_id" in evaluator.json()["detail"]
    one_doc = project.document_ids["ownership.md"]
    graded = await search(
        client, project, query="memory", profile="evaluator", filters={"document_id": one_doc}
    )
    assert graded.status_code == 200
    assert len(graded.json()["results"]) <= 5
    assert {h["document_id"] for h in graded.json()["results"]} == {one_doc}
    generator = await search(client, project, query="memory", profile="generator")
    assert generator.status_code == 422
    planner = (await search(client, project, query="memory", profile="planner")).json()
    assert len(planner["results"]) == 7  # all of the project's chunks: fewer than the planner's 18
    writer = (
        await search(client, project, query="memory", profile="writer", prefer_section="Structs > Methods")
    ).json()
    assert writer["results"][0]["section_path"] == ["Structs", "Methods"]


async def test_edited_and_deleted_text_is_never_returned(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> None:
    headers = await make_user("editor")
    project_id = await create_project(client, headers)
    response = await upload(
        client, headers, project_id, "zoo.md", b"# Zoo\n\nThe zebracorn lives in the north wing.\n"
    )
    document_id = response.json()["document_id"]
    await wait_for_job(client, headers, project_id, response.json()["job_id"])

    async def texts(query: str) -> list[str]:
        answer = await client.post(f"/projects/{project_id}/search", json={"query": query}, headers=headers)
        return [hit["text"] for hit in answer.json()["results"]]

    assert any("zebracorn" in text for text in await texts("zebracorn"))
    patched = await client.patch(
        f"/projects/{project_id}/documents/{document_id}",
        json={"content": "# Zoo\n\nThe unicornfish lives in the south wing.\n"},
        headers=headers,
    )
    await wait_for_job(client, headers, project_id, patched.json()["job_id"])
    assert not any("zebracorn" in text for text in await texts("zebracorn"))
    assert any("unicornfish" in text for text in await texts("unicornfish"))

    await client.delete(f"/projects/{project_id}/documents/{document_id}", headers=headers)
    assert await texts("unicornfish") == []


async def test_search_is_scoped_to_members(
    client: httpx.AsyncClient, project: SearchProject, make_user: UserFactory
) -> None:
    stranger = await make_user("stranger")
    response = await client.post(
        f"/projects/{project.project_id}/search", json={"query": "memory"}, headers=stranger
    )
    assert response.status_code == 404


async def test_command_line_search(project: SearchProject, services: ServiceUrls, data_dir: Path) -> None:
    question = "como trocar os valores de duas variáveis?"
    result = studyai(
        "search",
        "--project",
        project.project_id,
        "--debug",
        question,
        data_dir=data_dir,
        database_url=services.database_url,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "results for 'como trocar os valores de duas variáveis?'" in lines[0]
    assert "tuplas > Tuplas > Atribuição" in lines[1]
    assert any(line.startswith("timings (ms):") for line in lines)

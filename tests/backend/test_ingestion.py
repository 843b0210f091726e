"""Upload to searchable chunks through the API and a real arq worker, on the real shared data."""

import re
import subprocess
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest

from tests.conftest import SHARED_DATA, Caller, UserFactory, create_project, upload, wait_for_job

RUST = SHARED_DATA / "rust-book" / "src"
CHAPTERS = [
    "ch04-01-what-is-ownership.md",
    "ch04-02-references-and-borrowing.md",
    "ch05-01-defining-structs.md",
]
PDF = SHARED_DATA / "thinkpython2" / "thinkpython2.pdf"


def markdown_headings(source: str) -> set[str]:
    """ATX headings outside fenced code blocks, as the book's readers see them."""
    headings, fenced = set(), False
    for line in source.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)):
            headings.add(match.group(1).strip())
    return headings


def fence_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("```"))


@dataclass
class Course:
    headers: Caller
    project_id: str
    documents: dict[str, dict[str, Any]]  # filename -> upload answer + final job


@pytest.fixture(scope="module")
async def course(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> Course:
    headers = await make_user("student")
    project_id = await create_project(client, headers, name="Programming", language="en")
    accepted: dict[str, dict[str, Any]] = {}
    for path in [PDF, *(RUST / name for name in CHAPTERS)]:
        response = await upload(client, headers, project_id, path.name, path.read_bytes())
        assert response.status_code == 202, response.text
        accepted[path.name] = response.json()
    for name, answer in accepted.items():
        answer["job"] = await wait_for_job(client, headers, project_id, answer["job_id"], timeout=1800)
        assert answer["job"]["status"] == "succeeded", (name, answer["job"])
    return Course(headers, project_id, accepted)


async def chunks_of(client: httpx.AsyncClient, course: Course, document_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        response = await client.get(
            f"/projects/{course.project_id}/documents/{document_id}/chunks",
            params={"limit": 1000, "offset": len(found)},
            headers=course.headers,
        )
        assert response.status_code == 200, response.text
        page = response.json()
        found += page
        if len(page) < 1000:
            return found


async def test_every_upload_is_ready_with_chunks(client: httpx.AsyncClient, course: Course) -> None:
    listed = (await client.get(f"/projects/{course.project_id}/documents", headers=course.headers)).json()
    assert {d["filename"] for d in listed} == {PDF.name, *CHAPTERS}
    for document in listed:
        assert document["status"] == "ready"
        assert document["indexed_version"] == 1
        assert document["chunk_count"] > 0
        job = course.documents[document["filename"]]["job"]
        assert job["stage"] == "done"
        assert job["chunks_total"] == document["chunk_count"]
        assert job["done"] == job["total"] > 0


async def test_pdf_chunks_carry_page_numbers_and_outline_sections(
    client: httpx.AsyncClient, course: Course
) -> None:
    document_id = course.documents[PDF.name]["document_id"]
    chunks = await chunks_of(client, course, document_id)
    assert len(chunks) > 200
    assert all(1 <= c["page_start"] <= c["page_end"] <= 288 for c in chunks)
    starts = [c["page_start"] for c in chunks]
    assert starts == sorted(starts)
    assert max(c["page_end"] for c in chunks) >= 280
    paths = {tuple(c["section_path"]) for c in chunks}
    # Chapter 1 of Think Python, from the PDF's outline.
    assert any(path and "Chapter 1" in path[0] for path in paths) or any(
        "The way of the program" in " ".join(path) for path in paths
    )
    assert all(c["embedding_model"] == "e5-small-enpt-onnx-int8" for c in chunks)


async def test_markdown_chunks_follow_headings_and_keep_code_whole(
    client: httpx.AsyncClient, course: Course
) -> None:
    for name in CHAPTERS:
        headings = markdown_headings((RUST / name).read_text())
        chunks = await chunks_of(client, course, course.documents[name]["document_id"])
        assert chunks
        for chunk in chunks:
            assert set(chunk["section_path"]) <= headings, (name, chunk["section_path"])
            assert fence_lines(chunk["text"]) % 2 == 0, (name, chunk["ordinal"])
            assert chunk["page_start"] is None
        covered = {title for chunk in chunks for title in chunk["section_path"]}
        assert len(covered) >= len(headings) // 2  # sections are found, not just the first one


async def test_editing_one_section_reembeds_only_that_section(
    client: httpx.AsyncClient, course: Course, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    name = "ch05-01-defining-structs.md"
    document_id = course.documents[name]["document_id"]
    before = await chunks_of(client, course, document_id)
    source = (RUST / name).read_text()
    anchor = "### Unit-Like Structs Without Any Fields"
    assert anchor in source
    edited = source.replace(
        anchor, anchor + "\n\nUnit-like structs are handy as markers for trait implementations.", 1
    )

    response = await client.patch(
        f"/projects/{course.project_id}/documents/{document_id}",
        json={"content": edited},
        headers=course.headers,
    )
    assert response.status_code == 202, response.text
    assert response.json()["version"] == 2
    job = await wait_for_job(client, course.headers, course.project_id, response.json()["job_id"])
    assert job["status"] == "succeeded", job

    after = await chunks_of(client, course, document_id)
    edited_section = [c for c in after if c["section_path"] and c["section_path"][-1] == anchor.lstrip("# ")]
    assert edited_section
    assert 1 <= job["chunks_embedded"] <= len(edited_section) + 2
    assert job["chunks_embedded"] < len(after) // 3
    unchanged = {c["content_hash"] for c in before} & {c["content_hash"] for c in after}
    assert len(unchanged) >= len(after) - job["chunks_embedded"]
    assert all(c["document_version"] == 2 for c in after)
    stale = await db.execute(
        "SELECT count(*) AS n FROM chunks WHERE document_id = %s AND document_version = 1", (document_id,)
    )
    assert (await stale.fetchone())["n"] == 0


async def test_delete_removes_document_and_chunks(
    client: httpx.AsyncClient, course: Course, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    document_id = course.documents["ch04-01-what-is-ownership.md"]["document_id"]
    url = f"/projects/{course.project_id}/documents/{document_id}"
    assert (await client.delete(url, headers=course.headers)).status_code == 204
    assert (await client.get(url, headers=course.headers)).status_code == 404
    assert (await client.get(url + "/chunks", headers=course.headers)).status_code == 404
    left = await db.execute("SELECT count(*) AS n FROM chunks WHERE document_id = %s", (document_id,))
    assert (await left.fetchone())["n"] == 0
    versions = await db.execute(
        "SELECT count(*) AS n FROM document_versions WHERE document_id = %s", (document_id,)
    )
    assert (await versions.fetchone())["n"] == 0
    assert (await client.delete(url, headers=course.headers)).status_code == 404


async def test_another_user_gets_404_on_every_route(
    client: httpx.AsyncClient, course: Course, make_user: UserFactory
) -> None:
    stranger = await make_user("stranger")
    project = f"/projects/{course.project_id}"
    document = f"{project}/documents/{course.documents[PDF.name]['document_id']}"
    job = f"{project}/jobs/{course.documents[PDF.name]['job_id']}"
    calls = [
        ("GET", project, {}),
        ("PATCH", project, {"json": {"name": "mine now"}}),
        ("DELETE", project, {}),
        ("POST", f"{project}/members", {"json": {"email": stranger.email, "role": "owner"}}),
        ("POST", f"{project}/documents", {"files": {"file": ("x.md", b"# X\n\ntext", "text/markdown")}}),
        ("GET", f"{project}/documents", {}),
        ("GET", document, {}),
        ("PATCH", document, {"json": {"content": "# replaced"}}),
        ("DELETE", document, {}),
        ("GET", f"{document}/chunks", {}),
        ("GET", job, {}),
    ]
    for method, url, options in calls:
        response = await client.request(method, url, headers=stranger, **options)
        assert response.status_code == 404, (method, url, response.status_code)
    listed = (await client.get("/projects", headers=stranger)).json()
    assert course.project_id not in {p["id"] for p in listed}
    # Nothing changed for the owner.
    assert (await client.get(document, headers=course.headers)).status_code == 200


async def test_bm25_statistics_stay_exact_through_edits_and_deletes(
    client: httpx.AsyncClient, course: Course, db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    mismatches = """
        SELECT count(*) AS n FROM (
            SELECT project_id, ts_config::text, count(*) AS chunk_count, sum(lex_len) AS total_len
            FROM chunks GROUP BY 1, 2
        ) actual
        FULL JOIN (
            SELECT project_id, ts_config::text, chunk_count, total_len
            FROM project_chunk_stats WHERE chunk_count > 0
        ) kept USING (project_id, ts_config)
        WHERE actual.chunk_count IS DISTINCT FROM kept.chunk_count
           OR actual.total_len IS DISTINCT FROM kept.total_len
    """
    lexeme_mismatches = """
        SELECT count(*) AS n FROM (
            SELECT c.project_id, c.ts_config::text, u.lexeme, count(*) AS df
            FROM chunks c, unnest(c.tsv) u GROUP BY 1, 2, 3
        ) actual
        FULL JOIN (SELECT project_id, ts_config::text, lexeme, df FROM project_lexeme_stats) kept
            USING (project_id, ts_config, lexeme)
        WHERE actual.df IS DISTINCT FROM kept.df
    """
    assert (await (await db.execute(mismatches)).fetchone())["n"] == 0
    assert (await (await db.execute(lexeme_mismatches)).fetchone())["n"] == 0
    stats = await db.execute(
        "SELECT chunk_count FROM project_chunk_stats"
        " WHERE project_id = %s AND ts_config = 'english'::regconfig",
        (course.project_id,),
    )
    assert (await stats.fetchone())["chunk_count"] > 200
    assert (await client.delete(f"/projects/{course.project_id}", headers=course.headers)).status_code == 204
    left = await db.execute(
        "SELECT count(*) AS n FROM project_chunk_stats WHERE project_id = %s", (course.project_id,)
    )
    assert (await left.fetchone())["n"] == 0
    left = await db.execute(
        "SELECT count(*) AS n FROM project_lexeme_stats WHERE project_id = %s", (course.project_id,)
    )
    assert (await left.fetchone())["n"] == 0
    assert (await (await db.execute(mismatches)).fetchone())["n"] == 0
    assert (await (await db.execute(lexeme_mismatches)).fetchone())["n"] == 0

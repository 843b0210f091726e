"""Each malformed input gets a clear reason, the worker keeps running, and nothing is lost."""

import subprocess
from typing import Any

import httpx
import pytest

from tests.conftest import SHARED_DATA, Caller, create_project, upload, wait_for_job

BAD = SHARED_DATA / "bad-inputs"


@pytest.fixture(scope="module")
async def project_id(client: httpx.AsyncClient, owner: Caller) -> str:
    return await create_project(client, owner, name="bad inputs")


async def upload_and_wait(
    client: httpx.AsyncClient, owner: Caller, project_id: str, name: str
) -> dict[str, Any]:
    response = await upload(client, owner, project_id, name, (BAD / name).read_bytes())
    assert response.status_code == 202, response.text
    job = await wait_for_job(client, owner, project_id, response.json()["job_id"])
    document = (
        await client.get(f"/projects/{project_id}/documents/{response.json()['document_id']}", headers=owner)
    ).json()
    return {"job": job, "document": document}


async def test_upload_over_the_size_limit_is_413(
    client: httpx.AsyncClient, owner: Caller, project_id: str
) -> None:
    too_big = b"# big\n\n" + b"word " * (50 * 1024 * 1024 // 5)
    response = await upload(client, owner, project_id, "big.md", too_big)
    assert response.status_code == 413
    assert "50 MB" in response.json()["detail"]


@pytest.mark.parametrize(("name", "reason"), [("not-a-pdf.pdf", "not a PDF"), ("binary.md", "not text")])
async def test_wrong_content_type_is_415(
    client: httpx.AsyncClient, owner: Caller, project_id: str, name: str, reason: str
) -> None:
    response = await upload(client, owner, project_id, name, (BAD / name).read_bytes())
    assert response.status_code == 415
    assert reason in response.json()["detail"]


async def test_empty_file_is_rejected(client: httpx.AsyncClient, owner: Caller, project_id: str) -> None:
    response = await upload(client, owner, project_id, "empty.pdf", (BAD / "empty.pdf").read_bytes())
    assert response.status_code == 422
    assert "empty" in response.json()["detail"]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("encrypted.pdf", "password"),
        ("image-only.pdf", "OCR"),
        ("latin1.md", "UTF-8"),
        ("only-whitespace.md", "no text"),
    ],
)
async def test_unreadable_files_fail_with_a_reason(
    client: httpx.AsyncClient,
    owner: Caller,
    project_id: str,
    worker: subprocess.Popen[bytes],
    name: str,
    reason: str,
) -> None:
    outcome = await upload_and_wait(client, owner, project_id, name)
    assert outcome["job"]["status"] == "failed"
    assert reason in outcome["job"]["error"]
    assert outcome["document"]["status"] == "failed"
    assert reason in outcome["document"]["error"]
    assert outcome["document"]["chunk_count"] == 0
    assert worker.poll() is None, "the worker must survive bad input"


async def test_truncated_pdf_is_indexed_with_a_warning_or_fails_clearly(
    client: httpx.AsyncClient, owner: Caller, project_id: str, worker: subprocess.Popen[bytes]
) -> None:
    outcome = await upload_and_wait(client, owner, project_id, "truncated.pdf")
    if outcome["job"]["status"] == "succeeded":
        assert outcome["document"]["chunk_count"] > 0
        assert outcome["document"]["warnings"]
    else:
        assert "PDF" in outcome["job"]["error"]
    assert worker.poll() is None


async def test_nul_bytes_are_removed(client: httpx.AsyncClient, owner: Caller, project_id: str) -> None:
    outcome = await upload_and_wait(client, owner, project_id, "nul-bytes.md")
    assert outcome["job"]["status"] == "succeeded", outcome["job"]
    chunks = (
        await client.get(
            f"/projects/{project_id}/documents/{outcome['document']['id']}/chunks", headers=owner
        )
    ).json()
    assert chunks
    assert all("\x00" not in c["text"] for c in chunks)


async def test_failed_new_version_keeps_the_previous_one_searchable(
    client: httpx.AsyncClient, owner: Caller, project_id: str, worker: subprocess.Popen[bytes]
) -> None:
    good = "# Notas\n\n## Introdução\n\nUm texto em português sobre listas e dicionários.\n".encode()
    response = await upload(client, owner, project_id, "notas.md", good)
    document_id = response.json()["document_id"]
    assert (await wait_for_job(client, owner, project_id, response.json()["job_id"]))["status"] == "succeeded"
    url = f"/projects/{project_id}/documents/{document_id}"
    before = (await client.get(f"{url}/chunks", headers=owner)).json()

    for bad_file, reason in (("latin1.md", "UTF-8"), ("encrypted.pdf", "password")):
        files = {"file": (bad_file, (BAD / bad_file).read_bytes(), "application/octet-stream")}
        response = await client.patch(url, files=files, headers=owner)
        assert response.status_code == 202, response.text
        job = await wait_for_job(client, owner, project_id, response.json()["job_id"])
        assert job["status"] == "failed"
        assert reason in job["error"]
        document = (await client.get(url, headers=owner)).json()
        assert document["status"] == "failed"
        assert document["indexed_version"] == 1
        assert (await client.get(f"{url}/chunks", headers=owner)).json() == before
    assert worker.poll() is None

"""POST /projects/{id}/documents/{doc}/reindex: an editor retries a failed document (the real worker
indexes it), reindexes a ready one, and viewers and outsiders cannot."""

import subprocess
from typing import Any

import httpx
import psycopg

from core.jobs.specs import IndexDocument
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.content import documents
from tests.conftest import SHARED_DATA, Caller, UserFactory, add_member, create_project, wait_for_job
from tests.stored import uploaded_document
from tests.workers.runtime import job_runtime
from tests.workers.test_index_job import UnreachableEmbeddings
from workers.jobs.index import index_document

CHAPTER = SHARED_DATA / "rust-book" / "src" / "ch05-00-structs.md"
Conn = psycopg.AsyncConnection[dict[str, Any]]


async def failed_document(
    settings: Settings, services: ServiceUrls, db: Conn, owner: Caller, project_id: str
) -> documents.Document:
    """A document whose indexing failed for good because the embedding service stayed down: the
    job run in-process, on its last try, with embeddings that cannot be reached."""
    document = await uploaded_document(
        db, project_id, owner.id, CHAPTER.name, CHAPTER.read_bytes(), title="Structs"
    )
    async with job_runtime(settings, services, embeddings=UnreachableEmbeddings()) as runtime:
        args = IndexDocument(document.project_id, document.id, 1)
        result = await index_document(runtime, args, job_try=settings.workers.job_max_tries)
    assert result["status"] == "failed"
    return document


async def test_an_editor_retries_a_failed_document_and_reindexes_a_ready_one(
    client: httpx.AsyncClient,
    settings: Settings,
    services: ServiceUrls,
    db: Conn,
    make_user: UserFactory,
    worker: subprocess.Popen[bytes],
) -> None:
    owner, editor, viewer, outsider = [await make_user(name) for name in ("o", "e", "v", "x")]
    project_id = await create_project(client, owner, name="Retry")
    await add_member(client, owner, project_id, editor, "editor")
    await add_member(client, owner, project_id, viewer, "viewer")
    document = await failed_document(settings, services, db, owner, project_id)
    document_id = str(document.id)
    url = f"/projects/{project_id}/documents/{document_id}"
    before = (await client.get(url, headers=editor)).json()
    assert before["status"] == "failed" and "unavailable" in before["error"]

    assert (await client.post(f"{url}/reindex", headers=viewer)).status_code == 403
    assert (await client.post(f"{url}/reindex", headers=outsider)).status_code == 404
    missing = f"/projects/{project_id}/documents/00000000-0000-0000-0000-000000000000/reindex"
    assert (await client.post(missing, headers=editor)).status_code == 404
    assert (await client.get(url, headers=editor)).json()["status"] == "failed"  # untouched by them

    retried = await client.post(f"{url}/reindex", headers=editor)
    assert retried.status_code == 202, retried.text
    accepted = retried.json()
    assert accepted == {
        "document_id": document_id,
        "job_id": f"index:{document_id}:1",
        "version": 1,
        "status": "queued",
    }
    job = await wait_for_job(client, editor, project_id, accepted["job_id"], timeout=300)
    assert job["status"] == "succeeded" and job["error"] is None and job["attempts"] == 2, job
    ready = (await client.get(url, headers=editor)).json()
    assert ready["status"] == "ready" and ready["error"] is None
    assert ready["chunk_count"] == job["chunks_total"] > 0

    # A ready document can be indexed again too (the worker's last result for this job id is in
    # Redis: the route clears it so arq accepts the same id), by the owner as well.
    again = await client.post(f"{url}/reindex", headers=owner)
    assert again.status_code == 202 and again.json()["status"] == "queued", again.text
    rerun = await wait_for_job(client, owner, project_id, accepted["job_id"], timeout=300)
    assert rerun["status"] == "succeeded" and rerun["attempts"] == 3, rerun
    assert rerun["chunks_total"] == job["chunks_total"] and rerun["chunks_embedded"] == 0  # vectors reused
    assert worker.poll() is None

"""A full disk under the embedded Postgres: on a small tmpfs of its own (so root: mount), an instance
whose upload and indexing meet a full disk answers with the reason, shows nothing half-indexed, reports
a Postgres the disk stopped, and recovers once the space is freed."""

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from benchmarks.faults.full_disk import can_mount, exhaust_wal, fill, tmpfs
from core.runtime.disk import DISK_FULL_REASON
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import SHARED_DATA, local_settings, own_app, upload, wait_for_job

TMPFS_MB = 320
RESERVE_MB = 64  # STORAGE_MIN_FREE_MB's default
RUST = SHARED_DATA / "rust-book" / "src"
# ~100 chunks: embedding them takes several batches, so the disk can be filled while they are embedded.
BIG = "\n\n".join(
    (RUST / name).read_text() for name in ("ch04-01-what-is-ownership.md", "ch08-02-strings.md")
)
SMALL = "# Tides\n\nTides are the rise and fall of sea levels caused by the gravity of the Moon and the Sun."


@pytest.fixture(scope="module")
def disk_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, ServiceUrls, Path]]:
    logs = tmp_path_factory.mktemp("disk-full-logs")
    where = tmp_path_factory.mktemp("disk-full") / "mnt"
    if not can_mount(where):  # a failure, not a skip: this check must run where `make test` runs (root)
        pytest.fail("cannot mount a tmpfs here: the disk-full test needs root with CAP_SYS_ADMIN")
    with tmpfs(where, TMPFS_MB) as mount:
        data = mount / "data"
        settings = local_settings(data)
        with EmbeddedServices(settings, watch_postgres=True) as urls:
            apply_migrations(urls.database_url)
            # Its log off the full disk, so what it says about the disk is kept.
            worker = start_worker(urls, logs, STUDYAI_DATA_DIR=str(data), EMBEDDING_BATCH_SIZE="8")
            try:
                yield settings, urls, mount
            finally:
                stop_worker(worker)


@pytest.fixture
async def api(disk_stack: tuple[Settings, ServiceUrls, Path]) -> AsyncIterator[Any]:
    settings, urls, _ = disk_stack
    async with own_app(settings, urls, timeout=120) as (app, http):
        yield app, http


async def new_caller(urls: ServiceUrls) -> dict[str, str]:
    async with await psycopg.AsyncConnection.connect(urls.database_url, autocommit=True) as conn:
        user = await accounts.ensure_account(conn, email=f"disk-{time.time_ns()}@example.org")
        return {"Authorization": f"Bearer {await api_keys.create_api_key(conn, user_id=user.id)}"}


async def wait_embedding(http: httpx.AsyncClient, headers: dict[str, str], project: str, job: str) -> None:
    for _ in range(1200):
        row = (await http.get(f"/projects/{project}/jobs/{job}", headers=headers)).json()
        if row.get("stage") == "embedding" and 0 < row.get("done", 0) < row.get("total", 0):
            return
        assert row["status"] in ("queued", "running"), row
        await asyncio.sleep(0.05)
    raise AssertionError("the job never reached the middle of embedding")


async def found(http: httpx.AsyncClient, headers: dict[str, str], project: str, document: str) -> int:
    body = {"query": "String UTF-8 bytes push_str ownership heap"}
    response = await http.post(f"/projects/{project}/search", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return sum(hit["document_id"] == document for hit in response.json()["results"])


async def wait_database(
    http: httpx.AsyncClient, ok: bool, timeout: float = 90, saying: str = ""
) -> dict[str, Any]:
    """The readiness probe's database component once it is up (ok) or down saying `saying`. Down, it
    may first say only that no connection came (the server crashing) before the watch, which looks every
    2 s, reports that the postmaster is gone and why."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        database = (await http.get("/health/ready")).json()["components"]["database"]
        if (database["status"] == "ok") == ok and saying in database["detail"]:
            return database
        await asyncio.sleep(0.5)
    raise AssertionError(f"the database was not {'up' if ok else 'down'} within {timeout} s: {database}")


async def test_full_disk_fails_the_upload_with_the_reason_and_the_instance_recovers(
    api: Any, disk_stack: tuple[Settings, ServiceUrls, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, http = api
    _, urls, mount = disk_stack
    ballast = mount / "ballast"
    headers = await new_caller(urls)
    project = (await http.post("/projects", json={"name": "disk", "language": "en"}, headers=headers)).json()
    project = project["id"]
    accepted = (await upload(http, headers, project, "tides.md", SMALL.encode())).json()
    assert (await wait_for_job(http, headers, project, accepted["job_id"]))["status"] == "succeeded"

    # Below the reserve, an upload is refused before its bytes are stored: 507 with the reason.
    fill(ballast, RESERVE_MB - 8)
    refused = await upload(http, headers, project, "big.md", BIG.encode())
    assert refused.status_code == 507, refused.text
    assert "out of disk space" in refused.json()["detail"]

    # With room, it is stored; the disk fills while its chunks are embedded: the job fails with the
    # reason, and nothing of the document is visible.
    fill(ballast, RESERVE_MB + 100)
    accepted = (await upload(http, headers, project, "big.md", BIG.encode())).json()
    big = accepted["document_id"]
    await wait_embedding(http, headers, project, accepted["job_id"])
    fill(ballast, RESERVE_MB - 8)
    job = await wait_for_job(http, headers, project, accepted["job_id"], timeout=120)
    assert job["status"] == "failed" and job["error"] == DISK_FULL_REASON, job
    document = (await http.get(f"/projects/{project}/documents/{big}", headers=headers)).json()
    assert document["status"] == "failed" and document["indexed_version"] is None, document
    assert "disk space" in document["error"]
    chunks = (await http.get(f"/projects/{project}/documents/{big}/chunks", headers=headers)).json()
    assert (chunks if isinstance(chunks, list) else chunks["chunks"]) == []
    assert await found(http, headers, project, big) == 0

    # To the last byte, and the API's own check off: Postgres itself meets the full disk. A statement
    # that cannot grow a table answers 507; a WAL write that cannot is a PANIC, and the server may stay
    # down (its recovery needs WAL space too): then the readiness probe says why. Never a 500, a hang.
    monkeypatch.setattr("backend.documents.upload_budget.check_space", lambda settings, needed: None)
    fill(ballast, 0)
    statuses, stored = [], []
    for attempt in range(5):
        response = await upload(http, headers, project, f"more-{attempt}.md", BIG.encode() * 4)
        statuses.append(response.status_code)
        if response.status_code != 202:
            break
        stored.append(response.json()["document_id"])
    assert set(statuses) <= {202, 503, 507} and statuses[-1] in (503, 507), statuses
    seen = set()
    for _ in range(20):  # a PANIC: crash recovery, then either up again or down with the reason
        database = (await http.get("/health/ready")).json()["components"]["database"]
        seen.add(f"{database['status']}: {database['detail']}")
        if database["status"] == "ok" or "not running" in database["detail"]:
            break
        await asyncio.sleep(1)
    if database["status"] != "ok":
        assert "not running: its disk is full" in database["detail"], seen
    print(f"uploads with the disk full: {statuses}; database: {sorted(seen)}")

    # The worst case, made certain: new WAL segments until one cannot be created. The PANIC's crash
    # recovery needs WAL space too, so the postmaster exits: the readiness probe says why.
    switches = await asyncio.to_thread(exhaust_wal, urls.database_url)
    database = await wait_database(http, ok=False, timeout=60, saying="not running: its disk is full")
    print(f"PANIC after {switches} WAL switches; database: {database['detail']}")
    searched = await http.post(f"/projects/{project}/search", json={"query": "tides"}, headers=headers)
    assert searched.status_code == 503 and "Retry-After" in searched.headers, searched.text
    assert "its disk is full" in searched.json()["detail"]

    # Space freed: the watch starts Postgres again if it stopped; a reindex makes the document ready.
    ballast.unlink()
    await wait_database(http, ok=True)
    for document_id in stored:  # their queued jobs end at once: the document is gone
        deleted = await http.delete(f"/projects/{project}/documents/{document_id}", headers=headers)
        assert deleted.status_code == 204, deleted.text
    reindex = await http.post(f"/projects/{project}/documents/{big}/reindex", headers=headers)
    assert reindex.status_code == 202, reindex.text
    job = await wait_for_job(http, headers, project, reindex.json()["job_id"], timeout=180)
    assert job["status"] == "succeeded", job
    document = (await http.get(f"/projects/{project}/documents/{big}", headers=headers)).json()
    assert document["status"] == "ready" and document["indexed_version"] == 1, document
    assert await found(http, headers, project, big) > 0

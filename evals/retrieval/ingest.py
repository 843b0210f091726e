"""Loads a BEIR corpus through the real upload path: one `.txt` document per corpus entry, posted to
the API, indexed by the worker like any user's file. A project loaded before is reused: documents
are matched back to corpus ids by their file name, so even an interrupted load resumes cleanly."""

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import httpx

from evals.retrieval.beir import BeirDocument

Log = Callable[[str], None]


@dataclass(frozen=True)
class LoadedCorpus:
    project_id: str
    documents: dict[str, str]  # corpus id -> document id
    uploaded: int  # documents uploaded by this call (0 when the project was complete already)
    seconds: float  # upload + indexing time spent by this call


class CorpusLoadError(RuntimeError):
    """Some documents failed to index; the message carries their reasons."""


def filename_for(corpus_id: str) -> str:
    # Quoted, so that any corpus id survives as a file name and can be read back from the listing.
    return f"{quote(corpus_id, safe='')}.txt"


def corpus_id_of(filename: str) -> str | None:
    return unquote(filename[: -len(".txt")]) if filename.endswith(".txt") else None


async def create_project(http: httpx.AsyncClient, headers: dict[str, str], name: str) -> str:
    response = await http.post("/projects", json={"name": name, "language": "en"}, headers=headers)
    response.raise_for_status()
    return str(response.json()["id"])


async def project_exists(http: httpx.AsyncClient, headers: dict[str, str], project_id: str) -> bool:
    response = await http.get(f"/projects/{project_id}", headers=headers)
    if response.status_code in (404, 422):
        return False
    response.raise_for_status()
    return True


DOCUMENTS_PAGE = 1000  # the API's largest page of documents


async def list_documents(http: httpx.AsyncClient, headers: dict[str, str], project_id: str) -> list[dict]:
    """Every document of the project, a page at a time (an eval corpus holds thousands)."""
    rows: list[dict] = []
    while True:
        response = await http.get(
            f"/projects/{project_id}/documents",
            params={"limit": DOCUMENTS_PAGE, "offset": len(rows)},
            headers=headers,
        )
        response.raise_for_status()
        page = response.json()
        rows.extend(page)
        if len(page) < DOCUMENTS_PAGE:
            return rows


async def load_corpus(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project_id: str,
    corpus: dict[str, BeirDocument],
    *,
    log: Log = print,
    save: Callable[[dict[str, str]], None] | None = None,
    health_check: Callable[[], None] | None = None,
    concurrency: int = 8,
    poll_seconds: float = 2.0,
    progress_seconds: float = 30.0,
    timeout: float | None = None,
) -> LoadedCorpus:
    """Uploads what the project lacks, waits until every corpus document is ready, returns the mapping.
    `save` receives the mapping once uploads are accepted; `health_check` raises if the worker died."""
    started = time.monotonic()
    existing = await _reusable_documents(http, headers, project_id, corpus, log)
    missing = [doc for corpus_id, doc in corpus.items() if corpus_id not in existing]
    if missing:
        log(f"uploading {len(missing)} of {len(corpus)} documents to project {project_id}")
    uploaded = await _upload_all(http, headers, project_id, missing, concurrency)
    mapping = {corpus_id: existing.get(corpus_id) or uploaded[corpus_id] for corpus_id in corpus}
    if save is not None:
        save(mapping)
    await _wait_until_ready(
        http,
        headers,
        project_id,
        set(mapping.values()),
        log,
        health_check,
        poll_seconds,
        progress_seconds,
        None if timeout is None else started + timeout,
    )
    return LoadedCorpus(project_id, mapping, len(missing), time.monotonic() - started)


async def _reusable_documents(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project_id: str,
    corpus: dict[str, BeirDocument],
    log: Log,
) -> dict[str, str]:
    """corpus id -> document id for documents already in the project; a failed document or a
    duplicate left by an interrupted load is deleted, so it is uploaded once more or not at all."""
    kept: dict[str, str] = {}
    for row in await list_documents(http, headers, project_id):
        corpus_id = corpus_id_of(row["filename"])
        if corpus_id in corpus and corpus_id not in kept and row["status"] != "failed":
            kept[corpus_id] = row["id"]
            continue
        log(
            f"deleting document {row['id']} ({row['filename']}, {row['status']}):"
            " failed, a duplicate or not in the corpus"
        )
        response = await http.delete(f"/projects/{project_id}/documents/{row['id']}", headers=headers)
        response.raise_for_status()
    if kept:
        log(f"reusing {len(kept)} documents already in project {project_id}")
    return kept


async def _upload_all(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project_id: str,
    docs: list[BeirDocument],
    concurrency: int,
) -> dict[str, str]:
    gate = asyncio.Semaphore(concurrency)

    async def upload(doc: BeirDocument) -> tuple[str, str]:
        # The abstract is the file; the title goes in as the document title, so the chunk's context
        # header (embedded and BM25-indexed with the text) is the title, as BEIR's title + text.
        content = (doc.text if doc.text.strip() else doc.title).encode()
        async with gate:
            response = await http.post(
                f"/projects/{project_id}/documents",
                files={"file": (filename_for(doc.id), content, "text/plain")},
                data={"title": doc.title[:300]} if doc.title.strip() else {},
                headers=headers,
            )
        if response.status_code != 202:
            raise CorpusLoadError(
                f"upload of corpus id {doc.id} refused: {response.status_code} {response.text}"
            )
        return doc.id, str(response.json()["document_id"])

    return dict(await asyncio.gather(*(upload(doc) for doc in docs)))


async def _wait_until_ready(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project_id: str,
    wanted: set[str],
    log: Log,
    health_check: Callable[[], None] | None,
    poll_seconds: float,
    progress_seconds: float,
    deadline: float | None,
) -> None:
    # One listing per poll instead of one job request per document: thousands of jobs run at once.
    started = last_report = time.monotonic()
    first_ready: int | None = None
    while True:
        rows = [row for row in await list_documents(http, headers, project_id) if row["id"] in wanted]
        ready = [row for row in rows if row["status"] == "ready"]
        failed = [row for row in rows if row["status"] == "failed"]
        first_ready = len(ready) if first_ready is None else first_ready
        if len(ready) + len(failed) >= len(wanted):
            break
        now = time.monotonic()
        if now - last_report >= progress_seconds:
            last_report = now
            log(_progress_line(ready, len(wanted), len(ready) - first_ready, now - started))
        if deadline is not None and now > deadline:
            raise TimeoutError(f"{len(wanted) - len(ready)} documents still not indexed at the deadline")
        if health_check is not None:
            health_check()
        await asyncio.sleep(poll_seconds)
    if failed:
        reasons = "; ".join(f"{row['filename']}: {row['error']}" for row in failed[:5])
        raise CorpusLoadError(f"{len(failed)} documents failed to index ({reasons})")
    log(f"all {len(wanted)} documents ready ({sum(row['chunk_count'] for row in ready)} chunks)")


def _progress_line(ready: list[dict[str, Any]], total: int, done_here: int, seconds: float) -> str:
    chunks = sum(row["chunk_count"] for row in ready)
    rate = done_here / seconds if seconds > 0 else 0.0
    eta = f"ETA {(total - len(ready)) / rate / 60:.1f} min" if rate > 0 else "ETA unknown"
    return (
        f"indexed {len(ready)}/{total} documents ({chunks} chunks) after {seconds / 60:.1f} min,"
        f" {rate:.2f} docs/s, {eta}"
    )

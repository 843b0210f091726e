"""Runs QA cases through the real API over HTTP (streamed, so time to first token is what a client
sees) and keeps one record per case; scoring reads the records and the cited chunks back."""

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
from psycopg_pool import AsyncConnectionPool

from core.observability import timing
from evals.qa.datasets import Corpus, QACase
from evals.retrieval.ingest import list_documents

Log = Callable[[str], None]


@dataclass
class QARecord:
    case_id: str
    dataset: str
    kind: str
    question: str
    answer: str = ""
    has_answer: bool = False
    outcome: str = ""
    cited_ids: list[int] = field(default_factory=list)
    retrieved_ids: list[int] = field(default_factory=list)
    selected_ids: list[int] = field(default_factory=list)
    ttft_ms: float | None = None
    evidence_ms: float | None = None  # time to the stream's `evidence` event (the passages shown first)
    shown_ids: list[int] | None = None  # the chunks of that event's passages (None: no event came)
    total_ms: float = 0.0
    stage_ms: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    request_id: str = ""
    run_id: str | None = None  # the traced run, from the query history (LangSmith feedback)
    error: str | None = None
    choice: dict[str, Any] | None = None  # a question with options: each scorer's option probabilities
    support: float | None = None  # share of the answer's own words in its excerpts (agents/qa/support.py)
    withheld: str | None = None  # the model's answer when the support check withheld it
    confidence: dict[str, Any] | None = None  # {p, label, signals} of an answered reply
    guess: str | None = None  # outcome unsure: the model's answer, not claimed
    # Scored (evals.qa.evaluate): was the model's answer (claimed or not) right? None: it gave none.
    # An answer to an absent question is wrong whatever it says. evals.calibration fits on this.
    answer_right: bool | None = None
    groundedness: float | None = None  # with --groundedness: the judge's share of supported claims


def corpus_key(corpus: Corpus) -> str:
    digest = hashlib.sha256()
    for name, text in sorted(corpus.files.items()):
        digest.update(f"{name}\0{text}\0".encode())
    return f"{corpus.name}-{digest.hexdigest()[:16]}"


async def load_project(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    corpus: Corpus,
    state_path: Path,
    *,
    health_check: Callable[[], None],
    log: Log = print,
    timeout_s: float = 3600,
) -> str:
    """The corpus as a project, uploaded once: a later run with the same files reuses it. Reuse is
    keyed by the files' contents: another sample of articles under the same file names is another
    project."""
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    key = corpus_key(corpus)
    project_id = state.get(key)
    if project_id and (await http.get(f"/projects/{project_id}", headers=headers)).status_code != 200:
        project_id = None
    if project_id is None:
        response = await http.post(
            "/projects", json={"name": f"evals: {corpus.name}", "language": corpus.language}, headers=headers
        )
        response.raise_for_status()
        project_id = str(response.json()["id"])
        state[key] = project_id
        state_path.write_text(json.dumps(state, indent=1))
    listing = await list_documents(http, headers, project_id)
    have = {row["filename"] for row in listing if row["status"] != "failed"}
    for name, text in corpus.files.items():
        if name not in have:
            response = await http.post(
                f"/projects/{project_id}/documents",
                files={"file": (name, text.encode(), "text/markdown")},
                headers=headers,
            )
            response.raise_for_status()
    deadline = time.monotonic() + timeout_s
    while True:
        rows = await list_documents(http, headers, project_id)
        pending = [r for r in rows if r["status"] not in ("ready", "failed")]
        failed = [r for r in rows if r["status"] == "failed"]
        if failed:
            raise RuntimeError(f"documents failed to index: {[(r['filename'], r['error']) for r in failed]}")
        if not pending:
            log(f"{corpus.name}: {len(rows)} documents ready ({sum(r['chunk_count'] for r in rows)} chunks)")
            return project_id
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} documents of {corpus.name} still not indexed")
        health_check()
        await asyncio.sleep(2.0)


async def ask(http: httpx.AsyncClient, headers: dict[str, str], project_id: str, case: QACase) -> QARecord:
    """One streamed question in a new thread; the `done` event carries the full reply with debug."""
    record = QARecord(case.id, case.dataset, case.kind, case.question)
    started = timing.mark()
    body = {"question": case.question, "stream": True, "debug": True}
    event = ""
    try:
        async with http.stream("POST", f"/projects/{project_id}/qa", json=body, headers=headers) as response:
            if response.status_code != 200:
                record.error = f"HTTP {response.status_code}: {(await response.aread()).decode()[:300]}"
                return record
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    _apply(record, event, json.loads(line.removeprefix("data: ")), started)
    except httpx.HTTPError as error:
        record.error = f"{type(error).__name__}: {error}"
    record.total_ms = timing.elapsed_ms(started)
    return record


def _apply(record: QARecord, event: str, data: Any, started: float) -> None:
    if event == "evidence" and record.evidence_ms is None:
        record.evidence_ms = timing.elapsed_ms(started)
        record.shown_ids = [p["chunk_id"] for p in data]
    elif event == "token" and record.ttft_ms is None:
        record.ttft_ms = timing.elapsed_ms(started)
    elif event == "error":
        record.error = str(data.get("detail"))
    elif event == "done":
        record.answer = data["answer"]
        record.has_answer = data["has_answer"]
        record.outcome = data["outcome"]
        record.request_id = data["request_id"]
        record.cited_ids = [c["chunk_id"] for c in data["citations"]]
        debug = data.get("debug") or {}
        record.retrieved_ids = [c["chunk_id"] for c in debug.get("retrieved", [])]
        record.selected_ids = list(debug.get("selected_ids", []))
        record.stage_ms = dict(debug.get("timings_ms", {}))
        record.tokens = dict(debug.get("tokens", {}))
        record.choice = debug.get("choice")
        record.support, record.withheld = debug.get("support"), debug.get("withheld")
        record.confidence, record.guess = data.get("confidence"), data.get("guess")


@dataclass(frozen=True)
class ChunkInfo:
    filename: str
    text: str


async def chunk_info(pool: AsyncConnectionPool, project_id: str, ids: Sequence[int]) -> dict[int, ChunkInfo]:
    """File name and text of the given chunks of this project (the scorer's view of a citation)."""
    if not ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT c.id, d.filename, c.text FROM chunks c JOIN documents d"
            " ON d.id = c.document_id AND d.project_id = c.project_id"
            " WHERE c.project_id = %s AND c.id = ANY(%s)",
            (UUID(project_id), list(set(ids))),
        )
        return {row["id"]: ChunkInfo(row["filename"], row["text"]) for row in await cur.fetchall()}


def save_records(path: Path, records: Sequence[QARecord]) -> None:
    path.write_text("".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records))


def read_records(path: Path) -> list[QARecord]:
    return [QARecord(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


async def attach_run_ids(
    http: httpx.AsyncClient, headers: dict[str, str], project_id: str, records: Sequence[QARecord]
) -> None:
    """Each record's run id, read back from the project's query history by request id."""
    wanted = {r.request_id: r for r in records if r.request_id}
    offset = 0
    while wanted:
        params: dict[str, str | int] = {"agent": "qa", "limit": 500, "offset": offset}
        rows = (await http.get(f"/projects/{project_id}/queries", params=params, headers=headers)).json()
        for row in rows:
            if row["request_id"] in wanted:
                wanted.pop(row["request_id"]).run_id = row["run_id"]
        if len(rows) < 500:
            return
        offset += 500

"""Real embedded Postgres and Redis for the whole session, a real arq worker in a subprocess,
and the API driven in-process through httpx."""

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from langchain_openai import ChatOpenAI
from psycopg.rows import dict_row

from backend.main import create_app
from core.llm.chat import make_chat_model
from core.llm.local import LOCAL_MODELS, LlamaServer, assemble
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import start_worker, stop_worker

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def studyai(
    *args: str, data_dir: Path | None = None, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The `studyai` command line (`python -m backend.cli.app ARGS`), run from the repository with this
    data folder and database when given."""
    env = dict(os.environ)
    if data_dir is not None:
        env["STUDYAI_DATA_DIR"] = str(data_dir)
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    command = [sys.executable, "-m", "backend.cli.app", *args]
    return subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("studyai-data")


def local_settings(data_dir: Path, **values: Any) -> Settings:
    """Settings of a stack of the tests' own in `data_dir`: embedded Postgres and Redis, the embedded chat
    model, no rate limits, no kept replies; `values` add to them."""
    # Assembled model weights (1.1 GB) are kept across test sessions in the repo's ignored cache.
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        STUDYAI_DATA_DIR=data_dir,
        DATABASE_URL=None,
        REDIS_URL=None,
        LLM_BASE_URL=None,
        LLM_MODELS_DIR=REPO_ROOT / ".cache" / "models",
        RATE_LIMIT_ENABLED=False,
        # Tests swap fake models that answer one prompt differently: a kept reply would answer for them
        # (tests/backend/test_reply_cache.py turns it on).
        LLM_REPLY_CACHE_S=0,
        **values,
    )


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    # The suite drives hundreds of requests a minute from one address and one user (no rate limits), and
    # sets judging rates of 1: tests/backend/test_rate_limits.py checks both limits with apps of its own.
    return local_settings(data_dir, GROUNDEDNESS_SAMPLE_RATE_MAX=1.0)


@pytest.fixture(scope="session")
def services(settings: Settings) -> Iterator[ServiceUrls]:
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        yield urls


@pytest.fixture(scope="session")
def worker(services: ServiceUrls, data_dir: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = start_worker(services, data_dir)
    yield process
    stop_worker(process)


@pytest.fixture(scope="session")
async def client(settings: Settings, services: ServiceUrls) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings, services)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://studyai.test", timeout=60) as http:
            yield http


@pytest.fixture(scope="session")
def local_llm(settings: Settings) -> Iterator[ChatOpenAI]:
    """The real embedded chat model (Qwen2.5-Coder-1.5B via llama.cpp), started once, only for the
    tests that ask for it."""
    model = LOCAL_MODELS[settings.llm.local_model]
    path = assemble(model, settings.models_dir)
    log_path = settings.services.data_dir / "logs" / "llm-server.log"
    server = LlamaServer(path, context_tokens=settings.llm.context_tokens, threads=None, log_path=log_path)
    with server:
        yield make_chat_model(settings, base_url=server.base_url)


@pytest.fixture(scope="session")
async def db(services: ServiceUrls) -> AsyncIterator[psycopg.AsyncConnection[dict[str, Any]]]:
    conn = await psycopg.AsyncConnection.connect(services.database_url, autocommit=True, row_factory=dict_row)
    yield conn
    await conn.close()


Conn = psycopg.AsyncConnection[dict[str, Any]]  # the session's `db`: autocommit, rows as dicts


class Caller(dict[str, str]):
    """Request headers for one user, with the user's email and id at hand."""

    def __init__(self, key: str, email: str, id: UUID) -> None:
        super().__init__({"Authorization": f"Bearer {key}"})
        self.email = email
        self.id = id


class UserFactory:
    def __init__(self, conn: psycopg.AsyncConnection[dict[str, Any]]) -> None:
        self._conn = conn
        self._count = 0

    async def __call__(self, name: str = "user") -> Caller:
        self._count += 1
        email = f"{name}-{self._count}-{time.time_ns()}@example.org"
        user = await accounts.ensure_account(self._conn, email=email)
        return Caller(await api_keys.create_api_key(self._conn, user_id=user.id), user.email, user.id)


@pytest.fixture(scope="session")
def make_user(db: psycopg.AsyncConnection[dict[str, Any]]) -> UserFactory:
    return UserFactory(db)


async def wait_for_job(
    http: httpx.AsyncClient, headers: dict[str, str], project_id: str, job_id: str, timeout: float = 600
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = await http.get(f"/projects/{project_id}/jobs/{job_id}", headers=headers)
        assert response.status_code == 200, response.text
        job = response.json()
        if job["status"] in ("succeeded", "failed"):
            return job
        await asyncio.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")


async def create_project(http: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    response = await http.post("/projects", json={"name": "course", **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def add_member(
    http: httpx.AsyncClient, owner: dict[str, str], project_id: str, member: Caller, role: str
) -> None:
    """The owner invites the member's email with the role, and the member accepts it."""
    response = await http.post(
        f"/projects/{project_id}/members", json={"email": member.email, "role": role}, headers=owner
    )
    assert response.status_code == 202, response.text
    received = await http.get("/me/invitations", headers=member)
    assert received.status_code == 200, received.text
    [invitation] = [row for row in received.json() if row["project_id"] == project_id]
    accepted = await http.post(f"/me/invitations/{invitation['id']}/accept", headers=member)
    assert accepted.status_code == 200 and accepted.json()["role"] == role, accepted.text


async def class_project(
    http: httpx.AsyncClient, make_user: UserFactory, name: str
) -> tuple[str, Caller, Caller, Caller, Caller]:
    """A project of a teacher with an assistant (editor) and two students, alice and bob (viewers):
    (project id, teacher, assistant, alice, bob)."""
    owner, editor, alice, bob = [await make_user(n) for n in ("teacher", "assistant", "alice", "bob")]
    project_id = await create_project(http, owner, name=name, language="en")
    for member, role in ((editor, "editor"), (alice, "viewer"), (bob, "viewer")):
        await add_member(http, owner, project_id, member, role)
    return project_id, owner, editor, alice, bob


async def upload(
    http: httpx.AsyncClient,
    headers: dict[str, str],
    project_id: str,
    filename: str,
    content: bytes,
    content_type: str = "application/octet-stream",
) -> httpx.Response:
    return await http.post(
        f"/projects/{project_id}/documents",
        files={"file": (filename, content, content_type)},
        headers=headers,
    )


async def index_documents(
    http: httpx.AsyncClient, headers: dict[str, str], project_id: str, documents: dict[str, str]
) -> dict[str, str]:
    """Uploads each (file name, text) and waits until it is indexed; file name -> document id."""
    ids: dict[str, str] = {}
    for name, text in documents.items():
        response = await upload(http, headers, project_id, name, text.encode())
        assert response.status_code == 202, response.text
        ids[name] = response.json()["document_id"]
        job = await wait_for_job(http, headers, project_id, response.json()["job_id"])
        assert job["status"] == "succeeded", job
    return ids


@asynccontextmanager
async def own_app(
    settings: Settings, urls: ServiceUrls, *, timeout: float = 900
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """An app of the test module's own, so its chat model can be set without touching the shared client."""
    app = create_app(settings, urls)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://studyai.test", timeout=timeout
        ) as http:
            yield app, http


def change_runtime(app: FastAPI, **changes: Any) -> None:
    """Swaps resources of the app's runtime (a test's own chat model, settings, queue or admission)."""
    app.state.runtime = replace(app.state.runtime, **changes)


@contextmanager
def changed_runtime(app: FastAPI, **changes: Any) -> Iterator[None]:
    """The app's runtime resources swapped for one block, and those put back after it."""
    previous = {name: getattr(app.state.runtime, name) for name in changes}
    change_runtime(app, **changes)
    try:
        yield
    finally:
        change_runtime(app, **previous)


def changed_settings(app: FastAPI, **changes: Any) -> AbstractContextManager[None]:
    """The app's settings changed for one block (the routes read them per request)."""
    return changed_runtime(app, settings=app.state.runtime.settings.with_values(changes))

"""The real stack for an eval run: embedded services, an arq worker subprocess, the API in-process.

Evals always run on embedded services in their own data dir, so an eval project never lands in a
configured production database."""

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn
from psycopg_pool import AsyncConnectionPool

from backend.deps import runtime_of
from backend.main import create_app
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from evals.harness.worker import start_worker

REPO_ROOT = Path(__file__).resolve().parents[1]


def start_eval_worker(urls: ServiceUrls, settings: Settings) -> subprocess.Popen[bytes]:
    """The same worker a deployment runs, told where the stack is and how to chunk and cache."""
    environment = {"CHUNK_MAX_CHARS": str(settings.chunking.max_chars)}
    if settings.embeddings.cache_path:
        environment["EMBEDDING_CACHE_PATH"] = str(settings.embeddings.cache_path)
    if urls.llm_base_url:
        environment["LLM_BASE_URL"] = urls.llm_base_url
    return start_worker(urls, settings.services.data_dir, log_name="worker.log", **environment)


def liveness_check(worker: subprocess.Popen[bytes], settings: Settings) -> Callable[[], None]:
    def worker_alive() -> None:
        if worker.poll() is not None:
            raise RuntimeError(
                f"the worker exited ({worker.returncode}); see {settings.services.data_dir / 'worker.log'}"
            )

    return worker_alive


async def eval_user_headers(pool: AsyncConnectionPool, email: str, key_name: str) -> dict[str, str]:
    """The same user on every run (its project is reused); a fresh key each run, so none is stored."""
    async with pool.connection() as conn:
        user = await accounts.ensure_account(conn, email=email)
        key = await api_keys.create_api_key(conn, user_id=user.id, name=key_name)
    return {"Authorization": f"Bearer {key}"}


@dataclass
class ApiSession:
    http: httpx.AsyncClient
    headers: dict[str, str]
    # The app's own runtime: an eval reads the database (.pool) and searches (.retriever) as the API does.
    runtime: Runtime


def workdir_settings(workdir: Path) -> Settings:
    """An eval's own embedded Postgres and Redis in `workdir` (its projects are reused by the next run),
    with the passage-vector cache and the assembled model weights shared by every run and the tests."""
    workdir.mkdir(parents=True, exist_ok=True)
    return Settings(  # type: ignore[call-arg]
        STUDYAI_DATA_DIR=workdir.resolve(),
        DATABASE_URL=None,
        REDIS_URL=None,
        EMBEDDING_CACHE_PATH=(REPO_ROOT / ".cache" / "embeddings.sqlite").resolve(),
        LLM_MODELS_DIR=Path(os.environ.get("LLM_MODELS_DIR") or REPO_ROOT / ".cache" / "models"),
    )


def unlimited(settings: Settings) -> Settings:
    """No rate limits and no cap on the index jobs waiting: an eval is the operator's own run, one user
    uploading a corpus (SciFact: 5,183 documents at once) and asking hundreds of questions, far past a
    student's budgets."""
    return settings.with_values({"RATE_LIMIT_ENABLED": False, "PROJECT_MAX_PENDING_JOBS": 1_000_000})


@asynccontextmanager
async def api_session(
    settings: Settings, urls: ServiceUrls, *, email: str, key_name: str, timeout: float = 120
) -> AsyncIterator[ApiSession]:
    """The API app run in-process (its lifespan included), with a client signed in as the eval user."""
    app = create_app(unlimited(settings), urls)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://evals", timeout=timeout) as http:
            runtime = runtime_of(app)
            headers = await eval_user_headers(runtime.pool, email, key_name)
            yield ApiSession(http, headers, runtime)


@asynccontextmanager
async def api_server(
    settings: Settings, urls: ServiceUrls, *, email: str, key_name: str, timeout: float = 600
) -> AsyncIterator[ApiSession]:
    """The API served by uvicorn on a free local port, with a client over real HTTP: a streamed reply
    then arrives as a client would see it (an in-process ASGI transport buffers the whole body)."""
    app = create_app(unlimited(settings), urls)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()  # raises why the server could not start
            await asyncio.sleep(0.05)
        base_url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base_url, timeout=timeout) as http:
            runtime = runtime_of(app)
            headers = await eval_user_headers(runtime.pool, email, key_name)
            yield ApiSession(http, headers, runtime)
    finally:
        server.should_exit = True
        await serving

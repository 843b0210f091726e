"""The FastAPI app. Its lifespan opens the database pool and the queue, and closes them."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from arq.connections import RedisSettings, create_pool
from fastapi import FastAPI

from backend.routes import documents, jobs, projects
from core.db import open_pool
from core.services import ServiceUrls
from core.settings import Settings


def create_app(settings: Settings, urls: ServiceUrls) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.pool = await open_pool(urls.database_url)
        app.state.queue = await create_pool(RedisSettings.from_dsn(urls.redis_url))
        try:
            yield
        finally:
            await app.state.queue.aclose()
            await app.state.pool.close()

    app = FastAPI(
        title="studyAI",
        version="0.1.0",
        description="Per-project RAG backend for a multi-agent study assistant.",
        lifespan=lifespan,
    )

    @app.get("/health", tags=["health"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    app.include_router(projects.router)
    app.include_router(documents.router)
    app.include_router(jobs.router)
    return app

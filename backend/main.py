"""The FastAPI app. Its lifespan opens the database pool and the queue, and closes them."""

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from arq.connections import RedisSettings, create_pool
from fastapi import FastAPI

from agents.qa import build_graph, qa_config
from backend import health as health_routes
from backend.admission import add_model_error_handlers
from backend.body_limit import BodyLimitMiddleware
from backend.errors import add_agent_run_error_handlers, add_database_error_handlers
from backend.frontend import add_frontend
from backend.input_errors import add_input_error_handlers
from backend.observability import RequestContextMiddleware
from backend.rate_limits import RateLimited, RateLimiter, RateLimitMiddleware, rate_limited_handler
from backend.routes import (
    attempts,
    curation,
    documents,
    exports,
    history,
    jobs,
    me,
    members,
    plans,
    project_audit,
    projects,
    qa,
    questions,
    search,
    study,
)
from core.admission import LlmAdmission
from core.calibration import thresholds_for
from core.db import open_pool
from core.embeddings import make_embeddings
from core.llm import make_chat_model
from core.retrieval import RetrievalConfig, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.services import ServiceUrls
from core.settings import Settings
from core.tracing import Tracing


def create_app(settings: Settings, urls: ServiceUrls) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.pool = await open_pool(
            urls.database_url, max_size=settings.database_pool_size, timeout=settings.database_pool_timeout_s
        )
        app.state.queue = await create_pool(RedisSettings.from_dsn(urls.redis_url))
        # One fair queue in front of the chat model, shared through Redis with the other API processes
        # and the workers (core/admission.py).
        app.state.admission = LlmAdmission.from_settings(app.state.queue, settings)
        # Rate limits shared through the same Redis (None when RATE_LIMIT_ENABLED is false).
        app.state.rate_limiter = RateLimiter.from_settings(settings, urls.redis_url)
        embeddings = await asyncio.to_thread(make_embeddings, settings)
        app.state.retriever = Retriever(
            app.state.pool, embeddings, make_reranker(settings), RetrievalConfig.from_settings(settings)
        )
        # No chat model (llm_base_url None) leaves the agent routes answering 503 with the reason.
        # The embedding model's cosine thresholds, or a warning that it has none (core/calibration.py).
        app.state.thresholds = thresholds_for(settings.embedding_model, settings.data_dir)
        app.state.llm = make_chat_model(settings, base_url=urls.llm_base_url) if urls.llm_base_url else None
        app.state.tracing = Tracing.from_settings(settings)  # None unless LangSmith is configured
        qa = qa_config(settings.qa_context_chars, settings.qa_choice_context_chars, settings.qa_support_min)
        app.state.qa_graph = build_graph(qa)
        # Which answers are judged for groundedness; a test may replace it with a seeded one.
        app.state.sampler = random.Random()
        try:
            yield
        finally:
            if app.state.tracing is not None:
                app.state.tracing.flush()
            if app.state.rate_limiter is not None:
                await app.state.rate_limiter.aclose()
            await app.state.queue.aclose()
            await app.state.pool.close()

    app = FastAPI(
        title="studyAI",
        version="0.1.0",
        description="Per-project RAG backend for a multi-agent study assistant.",
        lifespan=lifespan,
    )
    # The last one added is the outermost: the per-address limit runs inside the request-id middleware (a
    # 429 carries the id and its log line) and before any body is read or key checked.
    app.add_middleware(RateLimitMiddleware)
    # A body over its route's cap (uploads MAX_UPLOAD_BYTES, else MAX_JSON_BODY_BYTES): 413 before
    # routing, parsing or authentication, chunked bodies cut off at the cap (backend/body_limit.py).
    # Only the request-id middleware (ids and the access log, no body) is outside it, so a 413 is logged.
    app.add_middleware(
        BodyLimitMiddleware, upload_bytes=settings.max_upload_bytes, json_bytes=settings.max_json_body_bytes
    )
    app.add_middleware(RequestContextMiddleware)
    add_database_error_handlers(app)  # pool exhausted or database down: 503 + Retry-After, not 500
    add_model_error_handlers(app)  # model queue full: 429; model or queue unreachable: 503
    add_agent_run_error_handlers(app)  # an agent run's domain errors: their one status each
    app.add_exception_handler(RateLimited, rate_limited_handler)  # a user's budget spent: 429
    add_input_error_handlers(app)  # a lone surrogate, a NUL, an offset past bigint: 422, never 500

    @app.get("/health", tags=["health"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    # GET /health/ready: each component's state (backend/health.py); it probes the chat model here.
    app.state.llm_base_url = urls.llm_base_url
    app.include_router(health_routes.router)

    app.include_router(projects.router)
    app.include_router(members.router)
    app.include_router(project_audit.router)
    app.include_router(me.router)
    app.include_router(documents.router)
    app.include_router(jobs.router)
    app.include_router(search.router)
    app.include_router(qa.router)
    app.include_router(plans.router)
    app.include_router(questions.router)
    app.include_router(attempts.router)
    app.include_router(curation.router)
    app.include_router(exports.router)
    app.include_router(history.router)
    app.include_router(study.router)
    # The web app at /app: static files on the API's origin, using only the routes above.
    add_frontend(app)
    return app

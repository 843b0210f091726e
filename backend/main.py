"""The FastAPI app. Its lifespan opens the runtime (core/runtime) and the API's own resources, and
closes them."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from backend.accounts.lti import router as lti
from backend.accounts.oidc import router as oidc
from backend.accounts.routers import admin, invitations, me, sign_in
from backend.api_docs import add_api_docs
from backend.audio import router as audio_overviews
from backend.deps import rate_limiter_of
from backend.documents import batches, jobs, versions
from backend.documents import router as documents
from backend.frontend import add_frontend
from backend.middleware.body_limit import BodyLimitMiddleware
from backend.middleware.errors import add_agent_run_error_handlers, add_database_error_handlers
from backend.middleware.input_errors import add_input_error_handlers
from backend.middleware.model_errors import add_model_error_handlers
from backend.middleware.rate_limits import RateLimited, RateLimitMiddleware, rate_limited_handler
from backend.middleware.request_context import RequestContextMiddleware
from backend.mindmap import router as mind_map
from backend.operations import health as health_routes
from backend.operations import workers as worker_routes
from backend.plans import router as plans
from backend.projects import audit_router as project_audit
from backend.projects import members
from backend.projects import router as projects
from backend.qa import history, search
from backend.qa import router as qa
from backend.questions import attempts, curation, exports
from backend.questions import router as questions
from backend.resources import open_api_resources
from backend.study import router as study
from backend.web.browser import StrictTransportMiddleware
from backend.web.errors import add_refusal_handlers
from core.runtime import open_runtime
from core.runtime.services import ServiceUrls
from core.runtime.supervisor import Supervisor
from core.settings import Settings


def create_app(settings: Settings, urls: ServiceUrls, *, supervisor: Supervisor | None = None) -> FastAPI:
    """`supervisor`: the children `studyai up` started, reported by GET /health/ready."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with (
            open_runtime(settings, urls) as runtime,
            open_api_resources(settings, urls, runtime.pool, supervisor) as resources,
        ):
            # The only state the app keeps: routes reach both through backend/deps.py.
            app.state.runtime = runtime
            app.state.api_resources = resources
            yield

    app = FastAPI(
        title="studyAI",
        version="0.1.0",
        description="Per-project RAG backend for a multi-agent study assistant.",
        lifespan=lifespan,
        docs_url=None,  # served from vendored assets (backend/api_docs.py)
        redoc_url=None,
    )
    # The last one added is the outermost: the per-address limit runs inside the request-id middleware (a
    # 429 carries the id and its log line) and before any body is read or key checked.
    app.add_middleware(RateLimitMiddleware, limiter_of=rate_limiter_of)
    # A body over its route's cap (uploads MAX_UPLOAD_BYTES, else MAX_JSON_BODY_BYTES): 413 before
    # routing, parsing or authentication, chunked bodies cut off at the cap (middleware/body_limit.py).
    # Only the request-id middleware (ids and the access log, no body) is outside it, so a 413 is logged.
    app.add_middleware(
        BodyLimitMiddleware,
        upload_bytes=settings.limits.max_upload_bytes,
        json_bytes=settings.limits.max_json_body_bytes,
        course_bytes=settings.limits.course_upload_max_bytes,
        course_files=settings.limits.course_upload_max_files,
    )
    app.add_middleware(RequestContextMiddleware)
    # Outermost: every answer, errors and 429s included, carries HSTS while PUBLIC_URL is https.
    app.add_middleware(StrictTransportMiddleware, https=settings.accounts.public_https)
    add_database_error_handlers(app)  # pool exhausted or database down: 503 + Retry-After, not 500
    add_model_error_handlers(app)  # model queue full: 429; model or queue unreachable: 503
    add_agent_run_error_handlers(app)  # an agent run's domain errors: their one status each
    app.add_exception_handler(RateLimited, rate_limited_handler)  # a user's budget spent: 429
    add_input_error_handlers(app)  # a lone surrogate, a NUL, an offset past bigint: 422, never 500
    add_refusal_handlers(app)  # every domain's refusals (core/errors.py): their one status each

    @app.get("/health", tags=["health"])
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    # GET /health/ready: each component's state (backend/operations/health.py), the chat model's included.
    app.include_router(health_routes.router)
    app.include_router(worker_routes.router)

    app.include_router(sign_in.router)
    app.include_router(admin.router)
    app.include_router(lti.router)
    app.include_router(projects.router)
    app.include_router(members.router)
    app.include_router(invitations.members_router)
    app.include_router(invitations.router)
    app.include_router(project_audit.router)
    app.include_router(me.router)
    app.include_router(batches.router)
    app.include_router(documents.router)
    app.include_router(versions.router)
    app.include_router(jobs.router)
    app.include_router(search.router)
    app.include_router(qa.router)
    app.include_router(plans.router)
    app.include_router(mind_map.router)
    app.include_router(audio_overviews.router)
    app.include_router(questions.router)
    app.include_router(attempts.router)
    app.include_router(curation.router)
    app.include_router(exports.router)
    app.include_router(history.router)
    app.include_router(study.router)
    app.include_router(oidc.router)
    # The web app at /app: static files on the API's origin, using only the routes above.
    add_frontend(app)
    add_api_docs(app)
    return app

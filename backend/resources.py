"""What only the API holds beside the runtime (core/runtime): opened with it by backend/main.py's lifespan,
read through backend/deps.py."""

import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

import httpx
from langgraph.graph.state import CompiledStateGraph
from psycopg_pool import AsyncConnectionPool

from agents.qa import build_graph, qa_config
from backend.accounts.lti.keys import LtiKeys, load_tool_key
from backend.accounts.oidc.provider import OidcProviders
from backend.documents.page_highlight import PageReader
from backend.middleware.rate_limits import RateLimiter
from core.runtime.postgres_watch import PostgresWatch
from core.runtime.services import ServiceUrls
from core.runtime.supervisor import Supervisor
from core.settings import Settings


@dataclass(frozen=True)
class ApiResources:
    rate_limiter: RateLimiter | None  # shared through Redis; None when RATE_LIMIT_ENABLED is false
    qa_graph: CompiledStateGraph[Any, Any, Any, Any]  # compiled once with the deployment's QAConfig
    sampler: random.Random  # which answers are judged for groundedness; a test may seed its own
    oidc_providers: OidcProviders  # the school's OIDC discovery document and keys, cached per app
    supervisor: Supervisor | None = None  # `studyai up`'s children, reported by GET /health/ready
    clock: Callable[[], datetime] | None = None  # None: UTC now; a test moves time with its own
    postgres_watch: PostgresWatch | None = None  # the embedded Postgres's, under `studyai up`
    lti: LtiKeys = field(kw_only=True)  # the tool's LTI key and the platforms' key sets (cached)
    page_reader: PageReader = field(default_factory=PageReader, kw_only=True)  # pages read for highlights


@asynccontextmanager
async def open_api_resources(
    settings: Settings, urls: ServiceUrls, pool: AsyncConnectionPool, supervisor: Supervisor | None = None
) -> AsyncIterator[ApiResources]:
    rate_limiter = RateLimiter.from_settings(settings, urls.redis_url)
    qa = qa_config(settings.qa)
    oidc_providers = OidcProviders()
    key_file, data_dir = settings.accounts.lti_tool_key_file, settings.services.data_dir
    lti = LtiKeys(partial(load_tool_key, pool, key_file=key_file, data_dir=data_dir), httpx.AsyncClient())
    try:
        yield ApiResources(
            rate_limiter,
            build_graph(qa),
            random.Random(),
            oidc_providers,
            supervisor,
            postgres_watch=urls.postgres_watch,
            lti=lti,
        )
    finally:
        await oidc_providers.aclose()
        await lti.http.aclose()
        if rate_limiter is not None:
            await rate_limiter.aclose()

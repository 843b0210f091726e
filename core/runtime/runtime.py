"""The one runtime: every shared resource of a process, opened once by open_runtime and closed in one
place. The API, the workers, the CLI, the evals and the benchmarks all start from it."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from arq.connections import ArqRedis, RedisSettings, create_pool
from langchain_core.embeddings import Embeddings
from langchain_openai import ChatOpenAI
from psycopg_pool import AsyncConnectionPool

from core.confidence import chat_model_key
from core.confidence.source import Calibrations, CalibrationSource
from core.embeddings.models import make_embeddings
from core.embeddings.thresholds import Thresholds, thresholds_for
from core.llm.admission import LlmAdmission
from core.llm.chat import make_chat_model
from core.llm.pool import ModelPool
from core.llm.reply_cache import ReplyCache
from core.observability.tracing import Tracing
from core.retrieval import Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.runtime.chat_plan import REMOTE_CONCURRENCY, ChatModelPlan
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.sql.pool import open_pool


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    urls: ServiceUrls
    chat: ChatModelPlan
    pool: AsyncConnectionPool
    redis: ArqRedis
    admission: LlmAdmission  # the one fair queue in front of the chat model, shared through Redis
    embeddings: Embeddings
    retriever: Retriever
    thresholds: Thresholds  # the embedding model's cosine thresholds (or a warning that it has none)
    calibrations: Calibrations  # the chat + embedding models' confidence calibration, re-read as it changes
    llm: ChatOpenAI | None  # None without a chat model
    models: ModelPool | None  # several model servers (LLM_BASE_URLS), each run routed to one; else None
    tracing: Tracing | None  # None unless LangSmith is configured
    replies: ReplyCache | None = None  # answers kept for identical prompts (None: none kept, e.g. a test's)


def make_retriever(
    settings: Settings, pool: AsyncConnectionPool, embeddings: Embeddings, reranker: str | None = None
) -> Retriever:
    """The one retriever factory: the runtime's, and a one-shot command's that needs no queue (`reranker`
    overrides RERANKER)."""
    return Retriever(pool, embeddings, make_reranker(settings, reranker), settings.retrieval)


@asynccontextmanager
async def open_runtime(
    settings: Settings,
    urls: ServiceUrls,
    *,
    pool_size: int | None = None,
    pool_timeout_s: float | None = None,
) -> AsyncIterator[Runtime]:
    """Opens everything a process shares; `pool_size`/`pool_timeout_s` default to the API's settings."""
    pool = await open_pool(
        urls.database_url,
        max_size=pool_size or settings.services.database_pool_size,
        timeout=pool_timeout_s or settings.services.database_pool_timeout_s,
    )
    redis: ArqRedis | None = None
    tracing = Tracing.from_settings(settings)
    try:
        redis = await create_pool(RedisSettings.from_dsn(urls.redis_url))
        chat = ChatModelPlan.decide(settings, urls)
        embeddings = await asyncio.to_thread(make_embeddings, settings)
        model_pool = ModelPool.from_settings(
            redis,
            settings,
            default_slots=settings.llm.concurrency or REMOTE_CONCURRENCY,
            make_model=lambda url: make_chat_model(settings, base_url=url),
        )
        if model_pool is not None:
            await model_pool.publish()
        yield Runtime(
            settings=settings,
            urls=urls,
            chat=chat,
            pool=pool,
            redis=redis,
            admission=LlmAdmission.for_plan(redis, settings, chat),
            embeddings=embeddings,
            retriever=make_retriever(settings, pool, embeddings),
            thresholds=thresholds_for(settings.embeddings.model, settings.services.data_dir),
            calibrations=CalibrationSource(
                pool,
                chat_model_key(settings),
                settings.embeddings.model,
                data_dir=settings.services.data_dir,
                all_signals=settings.qa.all_signals,
                refresh_s=settings.qa.calibration_refresh_s,
            ),
            llm=make_chat_model(settings, base_url=chat.base_url) if chat.base_url else None,
            models=model_pool,
            tracing=tracing,
            replies=ReplyCache(redis, settings.llm.reply_cache_s),
        )
    finally:
        if tracing is not None:
            await asyncio.to_thread(tracing.flush)
        if redis is not None:
            await redis.aclose()
        await pool.close()

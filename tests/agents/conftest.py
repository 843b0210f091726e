"""Fixtures shared by the agent tests that run on a real project."""

import asyncio
from collections.abc import AsyncIterator

import pytest

from core.embeddings.models import make_embeddings
from core.retrieval import RetrievalConfig, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.pool import open_pool


@pytest.fixture(scope="module")
async def retriever(settings: Settings, services: ServiceUrls) -> AsyncIterator[Retriever]:
    pool = await open_pool(services.database_url, max_size=4)
    embeddings = await asyncio.to_thread(make_embeddings, settings)
    yield Retriever(pool, embeddings, make_reranker(settings), RetrievalConfig.from_settings(settings))
    await pool.close()

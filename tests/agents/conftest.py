"""Fixtures shared by the agent tests that run on a real project."""

import asyncio
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest

from core.embeddings.models import make_embeddings
from core.retrieval import Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.sql.pool import open_pool
from tests.agents.helpers import Project, course_project
from tests.conftest import UserFactory


@pytest.fixture(scope="module")
async def retriever(settings: Settings, services: ServiceUrls) -> AsyncIterator[Retriever]:
    pool = await open_pool(services.database_url, max_size=4)
    embeddings = await asyncio.to_thread(make_embeddings, settings)
    yield Retriever(pool, embeddings, make_reranker(settings), settings.retrieval)
    await pool.close()


@pytest.fixture(scope="module")
async def project(
    request: pytest.FixtureRequest,
    client: httpx.AsyncClient,
    make_user: UserFactory,
    worker: subprocess.Popen[bytes],
    db: psycopg.AsyncConnection[dict[str, Any]],
) -> Project:
    """The course indexed in a new project of a new user, one per test module (named after it)."""
    made = await course_project(client, make_user, db, request.module.__name__.rsplit(".", 1)[-1])
    assert len(made.chunks) >= 12  # six sections in each of the two documents
    return made

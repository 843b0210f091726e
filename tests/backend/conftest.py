"""An app of the test module's own whose chat model a test can swap for a block (the question bank's
agent routes), browsers of its own on it, and what a module needs to open one with the worker running."""

import subprocess
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from langchain_core.language_models import BaseChatModel

from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import Caller, Conn, UserFactory, changed_runtime, own_app


@dataclass
class Api:
    app: FastAPI
    http: httpx.AsyncClient

    def model(self, llm: BaseChatModel | None) -> AbstractContextManager[None]:
        """The chat model the agent routes use, for the duration of a block."""
        return changed_runtime(self.app, llm=llm)

    @asynccontextmanager
    async def browser(self, timeout: float = 5) -> AsyncIterator[httpx.AsyncClient]:
        """A client with its own cookie jar on the module's app: one browser."""
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://studyai.test", timeout=timeout
        ) as http:
            yield http


@pytest.fixture(scope="module")
async def api(settings: Settings, services: ServiceUrls) -> AsyncIterator[Api]:
    async with own_app(settings, services) as (app, http):
        yield Api(app, http)


@dataclass
class OwnApps:
    """The session's settings, services (its worker running, so uploads get indexed) and users: what a
    module's own app is opened with."""

    settings: Settings
    services: ServiceUrls
    make_user: UserFactory

    def open(
        self, settings: Settings | None = None, *, timeout: float = 900
    ) -> AbstractAsyncContextManager[tuple[FastAPI, httpx.AsyncClient]]:
        """An app of the module's own (tests.conftest.own_app) with these settings, the session's if none."""
        return own_app(self.settings if settings is None else settings, self.services, timeout=timeout)


@pytest.fixture(scope="session")
def own_apps(
    settings: Settings, services: ServiceUrls, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> OwnApps:
    return OwnApps(settings, services, make_user)


@pytest.fixture
async def no_admin(db: Conn) -> AsyncIterator[None]:
    """A server without an active administrator (the ones other tests made come back afterwards)."""
    demoted = await (
        await db.execute("UPDATE users SET is_admin = false WHERE is_admin RETURNING id")
    ).fetchall()
    yield
    await db.execute("UPDATE users SET is_admin = true WHERE id = ANY(%s)", ([row["id"] for row in demoted],))


@pytest.fixture(scope="module")
async def owner(request: pytest.FixtureRequest, make_user: UserFactory) -> Caller:
    """A user of the test module's own, named after it (a module may make its own `owner`)."""
    return await make_user(request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_"))

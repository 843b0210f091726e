"""An app of the test module's own whose chat model a test can swap for a block (the question bank's
agent routes)."""

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from langchain_core.language_models import BaseChatModel

from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import change_runtime, own_app


@dataclass
class Api:
    app: FastAPI
    http: httpx.AsyncClient

    @contextmanager
    def model(self, llm: BaseChatModel | None) -> Iterator[None]:
        """The chat model the agent routes use, for the duration of a block."""
        before = self.app.state.runtime.llm
        change_runtime(self.app, llm=llm)
        try:
            yield
        finally:
            change_runtime(self.app, llm=before)


@pytest.fixture(scope="module")
async def api(settings: Settings, services: ServiceUrls) -> AsyncIterator[Api]:
    async with own_app(settings, services) as (app, http):
        yield Api(app, http)

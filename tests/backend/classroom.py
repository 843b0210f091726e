"""A class on the API whose clock the tests move: a teacher, an assistant (editor) and two students,
alice and bob (tests/conftest.class_project), behind an app whose `clock` resource reads `Clock.now`.
Shared by the study and provisional-grade tests, which add their own steps to it."""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Self

import httpx
from fastapi import FastAPI

from tests.conftest import Caller, UserFactory, class_project

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Classroom:
    app: FastAPI
    http: httpx.AsyncClient
    clock: Clock
    project_id: str
    owner: Caller
    editor: Caller
    alice: Caller
    bob: Caller

    @classmethod
    async def open(cls, app: FastAPI, http: httpx.AsyncClient, make_user: UserFactory, name: str) -> Self:
        """A new class in a new project, the app's clock set to T0."""
        clock = Clock()
        app.state.api_resources = replace(app.state.api_resources, clock=clock)
        return cls(app, http, clock, *await class_project(http, make_user, name))

    def url(self, path: str = "") -> str:
        return f"/projects/{self.project_id}{path}"

    async def get(self, path: str, who: Caller, expect: int = 200) -> Any:
        response = await self.http.get(self.url(path), headers=who)
        assert response.status_code == expect, response.text
        return response.json()

    async def post(self, path: str, who: Caller, body: dict[str, Any], expect: int) -> Any:
        response = await self.http.post(self.url(path), json=body, headers=who)
        assert response.status_code == expect, response.text
        return response.json()

"""Any OpenAI-compatible model (issue 41): each agent route answers through a local fake server per
provider behaviour (benchmarks/fake_providers.py) — log-probabilities refused with 400 or 403, or
silently absent; `temperature` rejected; no `json_schema`; 429 with Retry-After; a stream without
usage — and the confidence says honestly what it could not compute, never a crash.

The app runs as it would against LLM_BASE_URL: `auto` structured output (json_schema for an external
endpoint), the model from core/llm/chat.make_chat_model, and for the confidence the embedded model's
shipped calibration, whose grade fit rests on a log-probability check."""

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI

from benchmarks.fake_providers import Behaviour, ProviderChatServer
from core.confidence import calibration_for
from core.confidence.model import MISSING, UNCALIBRATED
from core.confidence.source import PinnedCalibration
from core.llm.chat import make_chat_model
from core.runtime.chat_plan import ChatModelPlan
from core.settings import Settings
from tests.backend.conftest import OwnApps
from tests.conftest import SHARED_DATA, Caller, changed_runtime, create_project, index_documents

Conn = psycopg.AsyncConnection[dict[str, Any]]
CHAPTER = "ch04-01-what-is-ownership.md"
QUESTION = "What happens to a value when its owner goes out of scope?"
CHOICE = (
    "What happens to a value when its owner goes out of scope?\n"
    "A) It is dropped\nB) It is copied to the heap\nC) It becomes global"
)
BEHAVIOURS = {
    "logprobs refused (400)": Behaviour(logprobs="refused-400"),
    "logprobs refused (403)": Behaviour(logprobs="refused-403"),
    "logprobs absent": Behaviour(logprobs="absent"),
    "temperature rejected": Behaviour(temperature_rejected=True),
    "no json_schema": Behaviour(json_schema=False),
    "429 with Retry-After": Behaviour(rate_limited_first=1),
    "stream without usage": Behaviour(stream_usage=False),
    "a reasoning model (403 logprobs, temperature 1 only)": Behaviour(
        logprobs="refused-403", temperature_rejected=True
    ),
}


@dataclass
class Course:
    app: FastAPI
    http: httpx.AsyncClient
    owner: Caller
    project_id: str
    settings: Settings

    async def post(self, path: str, body: dict[str, Any], expect: int = 200) -> Any:
        response = await self.http.post(f"/projects/{self.project_id}{path}", json=body, headers=self.owner)
        assert response.status_code == expect, response.text
        return response.json()


@pytest.fixture(scope="module")
async def course(own_apps: OwnApps) -> AsyncIterator[Course]:
    async with own_apps.open(timeout=120) as (app, http):
        owner = await own_apps.make_user("conformance")
        project_id = await create_project(http, owner, name="ownership", language="en")
        text = (SHARED_DATA / "rust-book" / "src" / CHAPTER).read_text()
        await index_documents(http, owner, project_id, {CHAPTER: text})
        yield Course(app, http, owner, project_id, own_apps.settings)


@pytest.fixture(params=list(BEHAVIOURS), ids=list(BEHAVIOURS))
def provider(request: pytest.FixtureRequest, course: Course) -> Iterator[ProviderChatServer]:
    with ProviderChatServer(BEHAVIOURS[request.param]) as server:
        # As with LLM_BASE_URL set: the structured mode "auto" picks for an external endpoint.
        external = course.settings.with_values({"LLM_BASE_URL": server.url, "LLM_MODEL": "hosted-model"})
        plan = replace(ChatModelPlan.for_url(external, server.url), base_url=server.url)
        assert plan.structured_mode == "json_schema"
        embedded_fit = calibration_for(
            "embedded/qwen2.5-coder-1.5b-instruct", course.settings.embeddings.model
        )
        with changed_runtime(
            course.app, llm=make_chat_model(external), chat=plan, calibrations=PinnedCalibration(embedded_fit)
        ):
            yield server


def streamed_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        if block and not block.startswith(":"):
            name, data = block.split("\n", 1)
            events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def honest(confidence: dict[str, Any]) -> None:
    """A label with a probability, or "medium" with the reason there is none."""
    assert confidence["label"] in ("high", "medium", "low")
    if confidence["p"] is None:
        assert confidence["label"] == "medium" and confidence["reason"], confidence


async def test_every_agent_answers_whatever_the_endpoint_refuses(
    course: Course, provider: ProviderChatServer, db: Conn
) -> None:
    behaviour = provider.behaviour
    answer = await course.post("/qa", {"question": QUESTION})
    assert answer["outcome"] == "answered" and answer["has_answer"], answer
    assert answer["citations"] and answer["answer"]
    honest(answer["confidence"])

    response = await course.http.post(
        f"/projects/{course.project_id}/qa", json={"question": QUESTION, "stream": True}, headers=course.owner
    )
    assert response.status_code == 200, response.text
    events = streamed_events(response.text)
    [done] = [data for name, data in events if name == "done"]
    assert done["outcome"] == "answered" and done["answer"] == answer["answer"]
    assert "".join(data["text"] for name, data in events if name == "token") == done["answer"]
    assert not [data for name, data in events if name == "error"], events

    choice = await course.post("/qa", {"question": CHOICE})
    assert choice["outcome"] in ("answered", "unsure") and choice["answer"], choice

    generated = await course.post("/questions/generate", {"n": 1, "types": ["short_answer"]}, expect=201)
    [item] = generated["questions"]
    try:
        graded = await course.post(
            f"/questions/{item['id']}/attempts", {"answer": "It is dropped."}, expect=201
        )
    finally:  # the next behaviour's fake writes the same question, which the bank would refuse as a repeat
        await db.execute("DELETE FROM questions WHERE id = %s", (item["id"],))
    assert graded["verdict"] in ("correct", "partially_correct", "incorrect"), graded
    confidence = graded["confidence"]
    honest(confidence)
    if behaviour.logprobs != "given":  # the grade's fit rests on the verdict check's log-probabilities
        assert confidence["reason"].startswith(MISSING) and "verdict_yes" in confidence["reason"], confidence

    plan = await course.post("/plans", {}, expect=201)
    assert plan["id"]

    # What the endpoint refused was asked at most once more than needed: the model remembers it.
    refused_kinds = {
        "refused-400": "logprobs", "refused-403": "logprobs"
    }.get(behaviour.logprobs)  # fmt: skip
    if refused_kinds is not None:
        assert provider.refusals <= 1 + int(behaviour.temperature_rejected), provider.refusals
        late = provider.bodies[len(provider.bodies) // 2 :]
        assert not any(body.get("logprobs") for body in late)
    if behaviour.temperature_rejected:
        assert all(body.get("temperature", 1) == 1 for body in provider.bodies[-3:])
    if not behaviour.json_schema:
        formats = [(body.get("response_format") or {}).get("type") for body in provider.bodies[-3:]]
        assert "json_schema" not in formats


async def test_an_unfitted_model_is_labelled_uncalibrated(course: Course) -> None:
    with ProviderChatServer(Behaviour()) as server:
        external = course.settings.with_values({"LLM_BASE_URL": server.url, "LLM_MODEL": "hosted-model"})
        plan = replace(ChatModelPlan.for_url(external, server.url), base_url=server.url)
        unfitted = calibration_for("a-host/hosted-model", course.settings.embeddings.model)
        with changed_runtime(
            course.app, llm=make_chat_model(external), chat=plan, calibrations=PinnedCalibration(unfitted)
        ):
            answer = await course.post("/qa", {"question": QUESTION})
    assert answer["confidence"]["p"] is None and answer["confidence"]["label"] == "medium"
    assert answer["confidence"]["reason"].startswith(UNCALIBRATED)

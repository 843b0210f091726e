"""Issue 11, part 6: schemathesis over every route of the app's OpenAPI, with two users and two
projects, in the bounded form CI runs (benchmarks/faults/fuzz.py runs the same passes longer).

Each pass fuzzes as one user, with path parameters, query parameters and body fields that name a
kind of row filled with real ids of both projects three times in four. Every answer must be free of
5xx, of the other project's ids (and its user's email and its document's words), and every 4xx must
be a JSON object with `detail`; after the pass the other user's rows must all still exist. The chat
model is a fake OpenAI-compatible server answering each structured request with a valid object."""

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from types import SimpleNamespace

import httpx
import pytest

from backend.main import create_app
from benchmarks.fake_model import SchemaChatServer, instance
from benchmarks.faults.fuzz import fuzz_settings, render, run_passes, running, stop_fuzz_app
from benchmarks.faults.fuzz_checks import check
from benchmarks.faults.fuzz_parties import Party
from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import UserFactory, create_project, upload

# Cases per route and generation mode (positive and negative; each positive one also resent with
# hostile values), in each of the two passes: about 630 requests a pass over 44 operations, ~30 s.
EXAMPLES = 6


@pytest.fixture(scope="module")
def fake_model() -> Iterator[SchemaChatServer]:
    with SchemaChatServer() as server:
        yield server


async def test_fuzz_every_route_as_each_user(
    settings: Settings, services: ServiceUrls, worker: object, fake_model: SchemaChatServer
) -> None:
    urls = replace(services, llm_base_url=fake_model.url)
    async with running(settings, urls) as (setup_app, http):
        fuzz_app = create_app(fuzz_settings(settings), urls)
        try:
            reports = await run_passes(setup_app, http, fuzz_app, EXAMPLES)
        finally:
            stop_fuzz_app()
    report = render(reports, EXAMPLES)
    print(report)
    assert [r.actor for r in reports] == ["A", "B"]
    for run in reports:
        assert not run.failures(), report
        # Every operation was exercised, and authenticated: the fuzzing user's key worked...
        # (a route without parameters has a single distinct case: Hypothesis stops there)
        assert all(r.cases >= 1 for r in run.routes), report
        assert sum(r.cases for r in run.routes) >= len(run.routes) * EXAMPLES, report
        statuses = sum((r.statuses for r in run.routes), start=Counter[int]())
        # (401s: negative cases without the Authorization header, and the cases after DELETE /me/keys
        # revoked the key, about 8% of a pass)
        assert statuses[401] < sum(statuses.values()) / 5, report
        # ...and real ids got past the membership checks to the routes' own work.
        reached = [r.route for r in run.routes if any(200 <= s < 300 for s in r.statuses)]
        assert len(reached) >= len(run.routes) / 2, report
        project_routes = [r for r in run.routes if "{project_id}/" in r.route]
        assert sum(1 for r in project_routes if any(200 <= s < 300 for s in r.statuses)) >= 10, report
    assert fake_model.requests > 0  # agent routes ran against the model


def test_checks_catch_a_leak_a_server_error_and_a_bare_4xx() -> None:
    """The fuzz checks are not vacuous: each rule flags the answer that breaks it, and an id the
    request itself carried may be echoed back."""
    victim = Party("B", {}, "u-b", "b@example.org", "11111111-1111-1111-1111-111111111111", "zqbsecret")
    victim.chunk_ids = {987654}
    case = SimpleNamespace(
        path="/projects/{project_id}", path_parameters={"project_id": "p"}, query={}, body=None
    )

    def rules(status: int, content: bytes, request: SimpleNamespace = case) -> list[str]:
        return [name for name, _ in check(request, status, content, victim)]

    assert rules(200, b'{"id": "11111111-1111-1111-1111-111111111111"}') == ["leak"]
    assert rules(200, b'{"results": [{"chunk_id": 987654}]}') == ["leak"]
    assert rules(200, b'event: token\ndata: {"text": "the code word is zqbsecret"}\n\n') == ["leak"]
    assert rules(200, b'{"count": 987654}') == []  # a number that is no chunk id
    assert rules(500, b"Internal Server Error") == ["server error"]
    assert rules(404, b"Not Found") == ["4xx without detail"]
    assert rules(404, b'{"detail": "Project not found."}') == []
    page = b"<!doctype html><html><body><h1>studyAI cannot open</h1><p>unknown state</p></body></html>"
    assert rules(400, page) == ["4xx without detail"]  # an HTML page is no answer for an API route
    launch = SimpleNamespace(path="/lti/launch", path_parameters={}, query={}, body=None)
    assert rules(400, page, launch) == []  # but the LMS's browser page says why in HTML
    echoed = SimpleNamespace(
        path="/projects/{project_id}", path_parameters={"project_id": victim.project_id}, query={}, body=None
    )
    assert rules(404, b'{"detail": "11111111-1111-1111-1111-111111111111 not found"}', echoed) == []


def test_fake_model_answers_with_a_valid_object_of_the_schema() -> None:
    from agents.qa.state import ModelAnswer, ThreadPlan

    for model in (ModelAnswer, ThreadPlan):
        schema = model.model_json_schema()
        model.model_validate(instance(schema, schema, "[42] an excerpt"))
    schema = ModelAnswer.model_json_schema()
    assert instance(schema, schema, "[42] an excerpt [7] another")["used_chunk_ids"] == [42]


async def test_what_the_fuzzer_found_answers_422_with_detail(
    client: httpx.AsyncClient, make_user: UserFactory
) -> None:
    """The fuzz run's finds, each pinned: input past the schemas is the client's fault (422, JSON
    `detail`), never a 500. Raw bodies: httpx would refuse to encode a lone surrogate itself."""
    owner = await make_user("finds")
    project = await create_project(client, owner)
    uploaded = await upload(client, owner, project, "notes.md", b"# Notes\n\nSome text.", "text/markdown")
    document = uploaded.json()["document_id"]
    as_json = {**owner, "Content-Type": "application/json"}
    probes = [
        # a lone surrogate stored as text: psycopg cannot encode it (UnicodeEncodeError)
        ("PATCH", f"/projects/{project}", b'{"name": "lone \\ud800 surrogate"}'),
        # a lone surrogate echoed in FastAPI's own 422 (the error body could not be rendered)
        ("PATCH", f"/projects/{project}", b'{"language": "\\ud800"}'),
        # an offset past bigint (NumericValueOutOfRange)
        ("GET", f"/projects/{project}/documents?offset={10**30}", None),
        ("GET", f"/projects/{project}/qa/threads?offset={2**63}", None),
        # a NUL character in text bound for Postgres (psycopg.DataError)
        ("POST", f"/projects/{project}/search", b'{"query": "nul \\u0000 byte"}'),
        ("POST", f"/projects/{project}/members", b'{"email": "a\\u0000@example.org", "role": "viewer"}'),
        # bytes that are no JSON, echoed in the route's own 422 (bytes in the detail could not be rendered)
        ("PATCH", f"/projects/{project}/documents/{document}", b"%\x1c\xb1\xfc\x1d"),
    ]
    for method, url, body in probes:
        response = await client.request(method, url, content=body, headers=as_json if body else owner)
        assert response.status_code == 422, (method, url, response.status_code, response.text)
        assert isinstance(response.json()["detail"], str | list), response.text

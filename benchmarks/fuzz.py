"""Schema-driven fuzzing of every route (issue 11, part 6): schemathesis generates requests from the
app's own OpenAPI document, valid and invalid ones, and each answer is checked for three things:

- no 5xx (nor an exception out of the app);
- no id of the other party's rows, its user's email or a word only its document holds, in an answer
  to the fuzzing user (ids the request itself carried may be echoed back, e.g. in a 422);
- every 4xx is a JSON object with `detail`.

Two parties, each a user owning a project with an indexed document, questions, a QA thread, an
attempt and a plan. Path parameters named after a kind of row (`project_id`, `document_id`, ...), and
query parameters and body fields named `*_id` or `*_ids`, are replaced three times in four by a real
id of either party, so the fuzzing user probes its own rows and the other party's. Each valid case is
sent a second time with hostile values in its query and body (a NUL, bidi controls, a lone surrogate,
integers past bigint), which the generator does not make by itself. A pass fuzzes as one
party; the run makes two passes, each on a fresh pair (as A, then as B), and after each checks that
the other party's rows are all still there. DELETE routes run last in a pass, revoking keys last of
all, so a pass does not delete its own project before the routes under it are fuzzed.

The chat model is a fake OpenAI-compatible server that answers any structured request with a valid
object of its schema (benchmarks/fake_model.py), so agent routes run their whole path quickly.

    python benchmarks/fuzz.py [--examples 50]   # per route and generation mode; writes reports/fuzz.md

tests/security/test_fuzz.py runs the same passes with a few examples per route, within CI's budget."""

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from psycopg import sql
from schemathesis import GenerationMode
from schemathesis.core import NotSet
from schemathesis.core.result import Ok
from schemathesis.python import asgi as schemathesis_asgi

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `python benchmarks/fuzz.py` from the root

from backend.main import create_app
from benchmarks.fake_model import SchemaChatServer
from core.migrations import apply_migrations
from core.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store import questions, users
from tests.conftest import start_worker, stop_worker

REPORT = Path(__file__).resolve().parent / "reports" / "fuzz.md"
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
REAL_ID_SHARE = 0.75  # of the id-named parameters and fields given a real id of either party
_KEY_USERS = ("user", "member")  # parameter kinds that name a user


# --- the two parties ---------------------------------------------------------------------------


@dataclass
class Party:
    name: str
    headers: dict[str, str]
    user_id: str
    email: str
    project_id: str
    marker: str  # a made-up word that only this party's document contains
    ids: dict[str, set[str]] = field(default_factory=dict)  # kind ("document", "thread", ...) -> uuids
    chunk_ids: set[int] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)  # text ids (jobs)

    def secrets(self) -> set[str]:
        """Every string an answer to the other party must not contain."""
        values = {self.project_id, self.user_id, self.email, self.marker, *self.texts}
        for kind_ids in self.ids.values():
            values |= kind_ids
        return {v.lower() for v in values}


@dataclass
class World:
    parties: tuple[Party, Party]

    def pool(self, name: str) -> list[Any]:
        """Real values for a parameter or field called `name` (both parties'), or [] if it names no kind."""
        kind = kind_of(name)
        if kind is None:
            return []
        values: set[Any] = set()
        for party in self.parties:
            if kind == "project":
                values.add(party.project_id)
            elif kind in _KEY_USERS:
                values.add(party.user_id)
            elif kind == "chunk":
                values |= party.chunk_ids
            elif kind == "job":
                values |= party.texts
            values |= party.ids.get(kind, set())
        return sorted(values, key=str)

    def any_uuid(self) -> list[str]:
        return sorted({i for p in self.parties for ids in p.ids.values() for i in ids} | self._projects())

    def _projects(self) -> set[str]:
        return {p.project_id for p in self.parties}


_KINDS = ("project", "document", "thread", "question", "plan", "job", "key", "user", "member", "attempt")


def kind_of(name: str) -> str | None:
    """`document_id`, `document_ids` or `document` -> "document"; names that name no kind of row -> None."""
    lowered = name.lower()
    for suffix in ("_ids", "_id"):
        if lowered.endswith(suffix):
            return lowered.removesuffix(suffix) or None
    return lowered if lowered in _KINDS else None


DOCUMENT = """# Photosynthesis in {marker} plants

Photosynthesis turns light energy into chemical energy stored in glucose. The light reactions run in
the thylakoid membranes and split water, releasing oxygen. The Calvin cycle runs in the stroma and
fixes carbon dioxide with the enzyme RuBisCO. The course code word is {marker}.

## Respiration

Cellular respiration releases the energy stored in glucose; its last stage, the electron transport
chain, runs in the inner mitochondrial membrane and makes most of the ATP.
"""


async def _wait_indexed(http: httpx.AsyncClient, headers: dict[str, str], project: str, job: str) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        response = await http.get(f"/projects/{project}/jobs/{job}", headers=headers)
        response.raise_for_status()
        if response.json()["status"] == "succeeded":
            return
        if response.json()["status"] == "failed":
            raise RuntimeError(f"indexing the fuzz document failed: {response.json()}")
        await asyncio.sleep(0.3)
    raise RuntimeError("the fuzz document was not indexed within 300 s (is a worker running?)")


async def make_party(app: FastAPI, http: httpx.AsyncClient, name: str) -> Party:
    """A user owning a project with an indexed document, two questions, a QA thread, an attempt and a
    plan (the last three through the API with the fake model), and every id of it read back from SQL."""
    marker = f"zq{name.lower()}{secrets.token_hex(4)}"
    async with app.state.pool.connection() as conn:
        user = await users.create_user(conn, email=f"fuzz-{name.lower()}-{time.time_ns()}@example.org")
        headers = {"Authorization": f"Bearer {await users.create_api_key(conn, user_id=user['id'])}"}
    response = await http.post("/projects", json={"name": f"fuzz {name}"}, headers=headers)
    response.raise_for_status()
    project = response.json()["id"]
    files = {"file": ("photosynthesis.md", DOCUMENT.format(marker=marker).encode(), "text/markdown")}
    response = await http.post(f"/projects/{project}/documents", files=files, headers=headers)
    response.raise_for_status()
    document = response.json()["document_id"]
    await _wait_indexed(http, headers, project, response.json()["job_id"])
    chunks = (await http.get(f"/projects/{project}/documents/{document}/chunks", headers=headers)).json()
    embeddings = app.state.retriever.embeddings
    async with app.state.pool.connection() as conn:
        for kind, text, answer, distractors in (
            (
                "multiple_choice",
                "Where do the light reactions run?",
                "thylakoid membranes",
                ["stroma", "soil", "nucleus"],
            ),
            ("short_answer", "Which enzyme fixes carbon dioxide?", "RuBisCO", []),
        ):
            vector = np.asarray(await asyncio.to_thread(embeddings.embed_query, text), dtype=np.float32)
            draft = questions.NewQuestion(
                document_id=document, section_path=[], type=kind, question=text, answer=answer,
                distractors=distractors, explanation="From the course text.", difficulty="easy",
                confidence=1.0, model_confidence=1.0, support=1.0, status="active",
                review_state="approved", source_chunk_ids=[chunks[0]["id"]], embedding=vector,
            )  # fmt: skip
            await questions.insert_question(
                conn, project_id=project, user_id=user["id"], question=draft, duplicate_similarity=0.99
            )
    party = Party(name, headers, str(user["id"]), user["email"], project, marker)
    await collect_ids(app, party)
    # Best effort: a thread, an attempt and a plan through the API (the fake model answers).
    await http.post(
        f"/projects/{project}/qa", json={"question": "Where does the Calvin cycle run?"}, headers=headers
    )
    for question_id in sorted(party.ids.get("question", ())):
        await http.post(
            f"/projects/{project}/questions/{question_id}/attempts",
            json={"answer": "stroma"},
            headers=headers,
        )
    await http.post(f"/projects/{project}/plans", json={}, headers=headers)
    await collect_ids(app, party)
    return party


async def collect_ids(app: FastAPI, party: Party) -> None:
    """Every row id of the party's project, from each table with a `project_id` and an `id` column (so
    tables added later are covered too), and the user's API key ids."""
    async with app.state.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT c.table_name, c.data_type FROM information_schema.columns c"
            " JOIN information_schema.columns p ON p.table_schema = c.table_schema"
            "  AND p.table_name = c.table_name AND p.column_name = 'project_id'"
            " WHERE c.table_schema = current_schema() AND c.column_name = 'id' ORDER BY 1"
        )
        tables = await cur.fetchall()
        for row in tables:
            query = sql.SQL("SELECT id FROM {} WHERE project_id = %s").format(
                sql.Identifier(row["table_name"])
            )
            ids = [r["id"] for r in await (await conn.execute(query, (party.project_id,))).fetchall()]
            kind = row["table_name"].removesuffix("s").split("_")[-1]
            if row["table_name"] == "chunks":
                party.chunk_ids |= {int(i) for i in ids}
            elif row["data_type"] == "uuid":
                party.ids.setdefault(kind, set()).update(str(i) for i in ids)
            elif row["data_type"] == "text":
                party.texts |= {str(i) for i in ids}
        keys = await conn.execute("SELECT id FROM api_keys WHERE user_id = %s", (party.user_id,))
        party.ids["key"] = {str(r["id"]) for r in await keys.fetchall()}


async def make_world(app: FastAPI, http: httpx.AsyncClient) -> World:
    return World((await make_party(app, http, "A"), await make_party(app, http, "B")))


async def missing_rows(app: FastAPI, party: Party) -> list[str]:
    """The party's rows (the project, documents, questions, threads) that are gone: the other party's
    fuzzing must not have deleted any of them."""
    kept = Party(party.name, party.headers, party.user_id, party.email, party.project_id, party.marker)
    await collect_ids(app, kept)
    async with app.state.pool.connection() as conn:
        cur = await conn.execute("SELECT 1 FROM projects WHERE id = %s", (party.project_id,))
        gone = [] if await cur.fetchone() else [f"project {party.project_id}"]
    for kind in ("document", "question", "thread"):
        gone += [f"{kind} {i}" for i in sorted(party.ids.get(kind, set()) - kept.ids.get(kind, set()))]
    return gone


# --- generation: real ids of both parties in id-named places ---------------------------------------


def _swap(value: Any, name: str, world: World, rng: Any) -> Any:
    """A real id for an id-named parameter or field, REAL_ID_SHARE of the time (lists: each item)."""
    pool = world.pool(name)
    if not pool:
        return value
    if isinstance(value, list):
        return [_swap(item, name, world, rng) for item in value]
    if rng.random() >= REAL_ID_SHARE:
        return value
    return rng.choice(pool)


def _swap_fields(container: Any, world: World, rng: Any, *, users_too: bool) -> Any:
    if not isinstance(container, dict):
        return container
    swapped = {}
    for key, value in container.items():
        # Only `*_id` / `*_ids` names: a bare `question` field is the question's text, not an id.
        kind = kind_of(key) if key.lower().endswith(("_id", "_ids")) else None
        if kind is not None and (users_too or kind not in _KEY_USERS):
            swapped[key] = _swap(value, key, world, rng)
        elif isinstance(value, dict):
            swapped[key] = _swap_fields(value, world, rng, users_too=users_too)
        else:
            swapped[key] = value
    return swapped


def _path_value(name: str, value: Any, world: World, rng: Any) -> Any:
    pool = world.pool(name) or world.any_uuid()  # `{id}` and other names: any real uuid
    return rng.choice(pool) if rng.random() < REAL_ID_SHARE else value


def add_real_ids(schema: Any, world: World) -> None:
    """Schema hooks that put the parties' real ids into path parameters, query parameters and body
    fields (a body never gets a user id: adding the other party as a member is not the attack here)."""
    randoms = st.randoms(use_true_random=False)

    def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
        if not path_parameters:
            return st.just(path_parameters)
        return randoms.map(lambda rng: {k: _path_value(k, v, world, rng) for k, v in path_parameters.items()})

    def flatmap_query(context: Any, query: dict[str, Any]) -> Any:
        return randoms.map(lambda rng: _swap_fields(query, world, rng, users_too=False))

    def flatmap_body(context: Any, body: Any) -> Any:
        return randoms.map(lambda rng: _swap_fields(body, world, rng, users_too=False))

    for hook in (flatmap_path_parameters, flatmap_query, flatmap_body):
        schema.hook(hook)


# --- checks --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    check: str  # "server error", "exception", "leak", "4xx without detail", "rows deleted"
    route: str
    status: int | None
    request: str
    detail: str


@dataclass
class RouteStats:
    route: str
    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the generator could not make cases


def _body(case: Any) -> Any:
    return None if isinstance(case.body, NotSet) else case.body


def _request_text(case: Any) -> str:
    return json.dumps(
        [case.path_parameters, case.query, _body(case)], default=str, ensure_ascii=False
    ).lower()


def _describe(case: Any) -> str:
    body = json.dumps(_body(case), default=str)[:160] if _body(case) is not None else ""
    query = f"?{json.dumps(case.query, default=str)[:120]}" if case.query else ""
    return f"{case.method} {case.formatted_path}{query} {body}".strip()


def _chunk_ints(value: Any, under_chunk: bool = False) -> Iterable[int]:
    """Ints stored under a key that names chunks, and the `id` of chunk-shaped objects."""
    if isinstance(value, dict):
        chunkish = "ordinal" in value and "document_id" in value
        for key, item in value.items():
            named = "chunk" in key.lower() or (chunkish and key == "id")
            yield from _chunk_ints(item, named)
    elif isinstance(value, list):
        for item in value:
            yield from _chunk_ints(item, under_chunk)
    elif under_chunk and isinstance(value, int) and not isinstance(value, bool):
        yield value


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def check(case: Any, status: int, content: bytes, victim: Party) -> list[tuple[str, str]]:
    """(check, detail) for each rule the answer breaks."""
    problems: list[tuple[str, str]] = []
    text = content.decode("utf-8", "replace")
    body = _json_or_none(text) if text else None
    if status >= 500:
        problems.append(("server error", text[:300]))
    if 400 <= status < 500 and not (isinstance(body, dict) and "detail" in body):
        problems.append(("4xx without detail", text[:300]))
    sent, lowered = _request_text(case), text.lower()
    leaked = sorted(s for s in victim.secrets() if s in lowered and s not in sent)
    if body is None and text.startswith(("event:", "data:", ":")):  # a stream: its events' data
        body = [_json_or_none(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    chunk_leaks = sorted({i for i in _chunk_ints(body) if i in victim.chunk_ids and str(i) not in sent})
    if leaked or chunk_leaks:
        what = leaked + [f"chunk {i}" for i in chunk_leaks]
        problems.append(("leak", f"{victim.name}'s {what} in {text[:200]}"))
    return problems


# --- the run -------------------------------------------------------------------------------------


def _order(operations: list[Any]) -> list[Any]:
    """Reads and writes first, then deletes: the project's own delete after the rest, revoking keys
    (`/me/...`) last of all, so the fuzzing user keeps its project and key as long as possible."""

    def rank(op: Any) -> tuple[int, str, str]:
        if op.method.upper() != "DELETE":
            return (0, op.path, op.method)
        if op.path.startswith("/me"):
            return (3, op.path, op.method)
        return (2 if op.path == "/projects/{project_id}" else 1, op.path, op.method)

    return sorted(operations, key=rank)


# Values the generator does not make (it writes valid UTF-8 and modest numbers) that reach Postgres
# and the models: a NUL character, a lone surrogate (JSON allows the escape), bidi control characters,
# integers past bigint. Surrogates only in JSON bodies: a query string or a form cannot carry them.
HOSTILE_TEXT = ("nul \x00 byte", "\u202e\u2066 bidi", "lone \ud800 surrogate")
HOSTILE_INT = (2**63, -(2**63) - 1, 10**30)


def _hostile(value: Any, index: int, surrogates: bool) -> Any:
    if isinstance(value, dict):
        return {k: _hostile(v, index, surrogates) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile(v, index, surrogates) for v in value]
    if isinstance(value, str):
        texts = HOSTILE_TEXT if surrogates else HOSTILE_TEXT[:-1]
        return texts[index % len(texts)]
    if isinstance(value, int) and not isinstance(value, bool):
        return HOSTILE_INT[index % len(HOSTILE_INT)]
    return value


def hostile_variant(case: Any, index: int) -> Any | None:
    """The case with every string and integer of its query and body replaced by a hostile value (the
    index picks which), or None when it has neither."""
    body = _body(case)
    json_body = case.media_type is not None and case.media_type.endswith("json")
    new_query = _hostile(case.query, index, surrogates=False) if case.query else case.query
    new_body = _hostile(body, index, surrogates=json_body) if isinstance(body, dict | list) else body
    if new_query == case.query and new_body == body:
        return None
    variant = case.derive(query=new_query)
    # Without generation metadata: schemathesis would revalidate the edited body against the schema,
    # which a lone surrogate cannot cross into its Rust validator; the variant is ours, not a generated case.
    object.__setattr__(variant, "_meta", None)
    if body is not None:
        variant.body = new_body
    return variant


def _send(case: Any, route: RouteStats, me: Party, victim: Party) -> None:
    route.cases += 1
    try:
        response = case.call(headers=me.headers, timeout=120)
    except Exception as error:  # the app raised: a 500 to a real client
        frames = traceback.extract_tb(error.__traceback__)
        ours = [f for f in frames if "site-packages" not in f.filename] or frames
        where = f"{type(error).__name__}: {str(error)[:200]} at {ours[-1].filename}:{ours[-1].lineno}"
        route.statuses[500] += 1
        route.failures.append(Failure("exception", route.route, 500, _describe(case), where))
        return
    route.statuses[response.status_code] += 1
    for name, detail in check(case, response.status_code, response.content, victim):
        route.failures.append(Failure(name, route.route, response.status_code, _describe(case), detail))


def _runner(
    strategy: Any, route: RouteStats, me: Party, victim: Party, examples: int, hostile: bool
) -> Callable[[], None]:
    """A Hypothesis test over one operation's cases that records each answer and what it broke; with
    `hostile`, each case is sent a second time as its hostile variant."""

    @hypothesis_settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,  # the same cases on every run
        database=None,
        phases=[Phase.explicit, Phase.generate],  # failures are collected, not shrunk
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        _send(case, route, me, victim)
        variant = hostile_variant(case, route.cases) if hostile else None
        if variant is not None:
            _send(variant, route, me, victim)

    return run


def fuzz_pass(
    app: FastAPI, world: World, actor: int, examples: int, log: Callable[[str], None] = print
) -> list[RouteStats]:
    """Fuzzes every operation as `world.parties[actor]`, `examples` cases per generation mode."""
    me, victim = world.parties[actor], world.parties[1 - actor]
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    add_real_ids(schema, world)
    operations = [r.ok() for r in schema.get_all_operations() if isinstance(r, Ok)]
    stats: list[RouteStats] = []
    for operation in _order(operations):
        route = RouteStats(f"{operation.method.upper()} {operation.path}")
        stats.append(route)
        for mode in MODES:
            try:
                strategy = operation.as_strategy(generation_mode=mode)
                _runner(strategy, route, me, victim, examples, hostile=mode.is_positive)()
            except Unsatisfiable:  # an operation without inputs has no invalid request to make
                if mode.is_positive:
                    route.errors.append("positive: no request could be generated")
            except Exception as error:  # generation itself failed (not the app)
                route.errors.append(f"{mode.value}: {type(error).__name__}: {str(error)[:200]}")
        log(f"  {route.route}: {route.cases} cases {dict(sorted(route.statuses.items()))}"
            f"{' FAILURES ' + str(len(route.failures)) if route.failures else ''}")  # fmt: skip
    return stats


def fuzz_settings(base: Settings) -> Settings:
    """The rate limiter on (it is fuzzed too) with budgets far above what a run sends: the fuzzer is one
    key at one address, and 429s for every case after the first minute would hide the routes behind."""
    values = base.model_dump()
    update: dict[str, Any] = {
        k: "1000000/minute" for k, v in values.items() if k.startswith("rate_limit_") and isinstance(v, str)
    }
    if "rate_limit_enabled" in values:
        update["rate_limit_enabled"] = True
    return base.model_copy(update=update)


@dataclass
class PassReport:
    actor: str
    routes: list[RouteStats]
    deleted: list[str]  # the other party's rows that were gone afterwards
    seconds: float

    def failures(self) -> list[Failure]:
        found = [f for r in self.routes for f in r.failures]
        gone = [Failure("rows deleted", "-", None, f"fuzzing as {self.actor}", row) for row in self.deleted]
        return found + gone


async def run_passes(
    setup_app: FastAPI,
    setup_http: httpx.AsyncClient,
    fuzz_app: FastAPI,
    examples: int,
    log: Callable[[str], None] = print,
) -> list[PassReport]:
    """Two passes, each on a fresh pair of parties: as A (probing B), then as B (probing A). The fuzz
    app runs in schemathesis's own event loop thread, so the passes run in a worker thread."""
    reports = []
    for actor in (0, 1):
        world = await make_world(setup_app, setup_http)
        me = world.parties[actor]
        log(f"pass as {me.name}: {sum(len(v) for v in me.ids.values())} own ids,"
            f" {len(world.parties[1 - actor].secrets())} of the other party's to watch for")  # fmt: skip
        started = time.monotonic()
        routes = await asyncio.to_thread(fuzz_pass, fuzz_app, world, actor, examples, log)
        deleted = await missing_rows(setup_app, world.parties[1 - actor])
        reports.append(PassReport(me.name, routes, deleted, time.monotonic() - started))
    return reports


def stop_fuzz_app() -> None:
    """Ends the lifespans schemathesis started for the apps it fuzzed (their pools and queues)."""
    schemathesis_asgi.shutdown_lifespans()


# --- the report ----------------------------------------------------------------------------------


def render(reports: list[PassReport], examples: int) -> str:
    lines = [
        "# Fuzz run: every route, two users, two projects",
        "",
        f"`python benchmarks/fuzz.py --examples {examples}`: schemathesis {schemathesis.__version__},"
        f" {examples} examples per route and generation mode (positive and negative), derandomized; each"
        " positive case is sent again with hostile values in its query and body (a NUL, bidi controls, a"
        " lone surrogate, integers past bigint).",
        "Checks: no 5xx; no id, email or document word of the other party's in any answer; every 4xx a"
        " JSON object with `detail`; the other party's rows all still there after the pass.",
        "",
    ]
    for report in reports:
        failures = report.failures()
        total = sum(r.cases for r in report.routes)
        lines += [
            f"## As {report.actor} ({total} requests, {report.seconds:.0f} s, {len(failures)} failures)",
            "",
            "| route | cases | status codes | failures |",
            "|---|---:|---|---:|",
        ]
        for r in report.routes:
            codes = ", ".join(f"{code}×{n}" for code, n in sorted(r.statuses.items()))
            lines.append(f"| `{r.route}` | {r.cases} | {codes} | {len(r.failures)} |")
        errors = [f"`{r.route}` {e}" for r in report.routes for e in r.errors]
        if errors:
            lines += ["", "Generation errors (the fuzzer could not build cases; not app failures):", ""]
            lines += [f"- {e}" for e in errors]
        if report.deleted:
            lines += ["", f"Rows of the other party deleted: {', '.join(report.deleted)}"]
        first = {(f.check, f.route, f.status): f for f in reversed(failures)}
        if first:
            lines += ["", "First failure of each kind:", ""]
            lines += [
                f"- **{f.check}** `{f.route}` {f.status}: `{f.request[:200]}` → {f.detail[:300]}"
                for f in reversed(first.values())
            ]
        lines.append("")
    return "\n".join(lines)


@asynccontextmanager
async def running(settings: Settings, urls: ServiceUrls) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(settings, urls)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://fuzz.test", timeout=120) as http:
            yield app, http


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=50, help="cases per route and generation mode")
    parser.add_argument("--report", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(_env_file=None, STUDYAI_DATA_DIR=Path(tmp), database_url=None, redis_url=None)  # type: ignore[call-arg]
        with EmbeddedServices(base) as urls, SchemaChatServer() as model:
            apply_migrations(urls.database_url)
            urls = replace(urls, llm_base_url=model.url)
            worker = start_worker(urls, Path(tmp))
            try:
                async with running(base, urls) as (setup_app, http):
                    fuzz_app = create_app(fuzz_settings(base), urls)
                    try:
                        reports = await run_passes(setup_app, http, fuzz_app, args.examples)
                    finally:
                        stop_fuzz_app()
            finally:
                stop_worker(worker)
    text = render(reports, args.examples)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text)
    print(text)
    print(f"report: {args.report}")
    if any(r.failures() for r in reports):
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())

"""The fuzz run's two parties (benchmarks/faults/fuzz.py): each a user owning a project with an indexed
document, questions, a thread, an attempt and a plan, every row id read back from SQL; and the schema
hooks that put either party's real ids into the generated requests' id-named places."""

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import numpy as np
from fastapi import FastAPI
from hypothesis import strategies as st
from psycopg import sql

from backend.deps import runtime_of
from core.store.accounts import accounts, api_keys
from core.store.study import questions

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
    runtime = runtime_of(app)
    async with runtime.pool.connection() as conn:
        user = await accounts.ensure_account(conn, email=f"fuzz-{name.lower()}-{time.time_ns()}@example.org")
        headers = {"Authorization": f"Bearer {await api_keys.create_api_key(conn, user_id=user.id)}"}
    response = await http.post("/projects", json={"name": f"fuzz {name}"}, headers=headers)
    response.raise_for_status()
    project = response.json()["id"]
    files = {"file": ("photosynthesis.md", DOCUMENT.format(marker=marker).encode(), "text/markdown")}
    response = await http.post(f"/projects/{project}/documents", files=files, headers=headers)
    response.raise_for_status()
    document = response.json()["document_id"]
    await _wait_indexed(http, headers, project, response.json()["job_id"])
    chunks = (await http.get(f"/projects/{project}/documents/{document}/chunks", headers=headers)).json()
    embeddings = runtime.embeddings
    async with runtime.pool.connection() as conn:
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
                conn, project_id=project, user_id=user.id, question=draft, duplicate_similarity=0.99
            )
    party = Party(name, headers, str(user.id), user.email, project, marker)
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
    async with runtime_of(app).pool.connection() as conn:
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
    async with runtime_of(app).pool.connection() as conn:
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

"""The lexical side is exact BM25 (checked against a Python computation over the same tsvectors), and
its candidate budget only narrows which chunks get scored, never a score."""

import math
import subprocess
from typing import Any
from uuid import UUID

import httpx
import psycopg
import pytest

from core.retrieval.lexical import lexical_candidates
from core.retrieval.types import Filters
from tests.backend.test_search import search_project
from tests.conftest import UserFactory

K1, B = 0.9, 0.4
QUERY = "garbage collector frees heap memory when the program is compiled"


@pytest.fixture(scope="module")
async def project_id(
    client: httpx.AsyncClient, make_user: UserFactory, worker: subprocess.Popen[bytes]
) -> UUID:
    return UUID((await search_project(client, make_user, "bm25", "bm25")).project_id)


async def python_bm25(db: psycopg.AsyncConnection[dict[str, Any]], project_id: UUID) -> dict[int, float]:
    """Textbook BM25 over the project's chunks, from their tsvectors alone."""
    rows = await (
        await db.execute(
            "SELECT c.id, c.lex_len, c.ts_config::text AS config,"
            " array(SELECT u.lexeme || ':' || coalesce(array_length(u.positions, 1), 1)"
            "       FROM unnest(c.tsv) u) AS terms,"
            " array(SELECT lexeme FROM unnest(to_tsvector(c.ts_config, %s))) AS query_terms"
            " FROM chunks c WHERE c.project_id = %s",
            (QUERY, project_id),
        )
    ).fetchall()
    tfs = {r["id"]: {t.rsplit(":", 1)[0]: int(t.rsplit(":", 1)[1]) for t in r["terms"]} for r in rows}
    n, avgdl = len(rows), sum(r["lex_len"] for r in rows) / len(rows)
    df: dict[tuple[str, str], int] = {}
    for r in rows:
        for term in tfs[r["id"]]:
            df[(r["config"], term)] = df.get((r["config"], term), 0) + 1
    scores: dict[int, float] = {}
    for r in rows:
        score = 0.0
        for term in set(r["query_terms"]) & set(tfs[r["id"]]):
            tf, d = tfs[r["id"]][term], df[(r["config"], term)]
            idf = math.log(1 + (n - d + 0.5) / (d + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * r["lex_len"] / avgdl))
        if score > 0:
            scores[r["id"]] = score
    return scores


async def bm25(
    db: psycopg.AsyncConnection[dict[str, Any]], project_id: UUID, **options: Any
) -> dict[int, float]:
    found = await lexical_candidates(
        db, project_id=project_id, query=QUERY, filters=Filters(), limit=1000, k1=K1, b=B, **options
    )
    return dict(found)


async def test_sql_bm25_equals_the_textbook_formula(
    db: psycopg.AsyncConnection[dict[str, Any]], project_id: UUID
) -> None:
    expected = await python_bm25(db, project_id)
    assert len(expected) >= 3
    got = await bm25(db, project_id, budget=10**9)
    assert got.keys() == expected.keys()
    for chunk_id, score in expected.items():
        assert got[chunk_id] == pytest.approx(score, rel=1e-9)


async def test_budget_narrows_candidates_but_never_changes_a_score(
    db: psycopg.AsyncConnection[dict[str, Any]], project_id: UUID
) -> None:
    exact = await bm25(db, project_id, budget=10**9)
    narrow = await bm25(db, project_id, budget=1)
    assert narrow and set(narrow) < set(exact)
    for chunk_id, score in narrow.items():
        assert score == pytest.approx(exact[chunk_id], rel=1e-9)
    # A chunk outside the budget is still scored when the dense side asks for it.
    outside = next(iter(set(exact) - set(narrow)))
    asked = await bm25(db, project_id, budget=1, also_score=[outside])
    assert asked[outside] == pytest.approx(exact[outside], rel=1e-9)
    # A chunk the dense side found that holds no query term gets no lexical score.
    rows = await (await db.execute("SELECT id FROM chunks WHERE project_id = %s", (project_id,))).fetchall()
    unmatched = [r["id"] for r in rows if r["id"] not in exact]
    assert unmatched
    assert not set(unmatched) & set(await bm25(db, project_id, budget=1, also_score=unmatched))

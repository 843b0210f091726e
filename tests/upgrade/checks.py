"""What an upgraded database must satisfy beyond "every row kept": nothing stuck, DATA_MODEL's invariants,
the data migrations' rewrites of older rows, and searches over the older eras' chunks."""

from typing import Any
from uuid import UUID

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row

from core.retrieval.dense import dense_candidates
from core.retrieval.lexical import lexical_candidates
from core.retrieval.types import Filters
from tests.upgrade.history import History

BIOLOGY = UUID("00000000-0000-4000-8000-000100000011")  # fixture 0001's project
ENERGY_DOC = "00000000-0000-4000-8000-000100000021"  # its ready document: chunks 0, 1, 2
UNFINISHED = ("queued", "running")

# Statements that return the rows breaking a rule; each must return none at head.
RULES = {
    # A document waiting for indexing needs a job the worker re-enqueues at start (DATA_MODEL "Jobs and
    # workers", lost queue); without one it waits forever.
    "queued document without a live job": """
        SELECT d.id FROM documents d WHERE d.status IN ('queued', 'processing') AND NOT EXISTS (
            SELECT 1 FROM jobs j WHERE j.id = 'index:' || d.id || ':' || d.version
                                   AND j.status IN ('queued', 'running'))""",
    # Invariant 3: a document's live chunks all belong to its indexed version.
    "chunk of another version than the indexed one": """
        SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id
        WHERE c.document_version IS DISTINCT FROM d.indexed_version""",
    # Invariant 6: the BM25 statistics equal a recount.
    "chunk stats differ from a recount": """
        (SELECT project_id, ts_config, chunk_count, total_len FROM project_chunk_stats WHERE chunk_count > 0
         EXCEPT SELECT project_id, ts_config, count(*), sum(lex_len) FROM chunks GROUP BY 1, 2)
        UNION ALL
        (SELECT project_id, ts_config, count(*), sum(lex_len) FROM chunks GROUP BY 1, 2
         EXCEPT SELECT project_id, ts_config, chunk_count, total_len FROM project_chunk_stats)""",
    "lexeme stats differ from a recount": """
        WITH recount AS (SELECT c.project_id, c.ts_config, u.lexeme, count(*)::integer AS df
                         FROM chunks c, unnest(c.tsv) u GROUP BY 1, 2, 3)
        (SELECT project_id, ts_config, lexeme, df FROM project_lexeme_stats EXCEPT SELECT * FROM recount)
        UNION ALL
        (SELECT * FROM recount EXCEPT SELECT project_id, ts_config, lexeme, df FROM project_lexeme_stats)""",
    "question citing a chunk that does not exist": """
        SELECT q.id FROM questions q
        WHERE EXISTS (SELECT 1 FROM unnest(q.source_chunk_ids) s WHERE s NOT IN (SELECT id FROM chunks))""",
    # Migration 0012's backfill: an evaluation belongs to the member who asked the query it judged.
    "evaluation not owned by its query's asker": """
        SELECT e.id FROM rag_evaluations e JOIN query_history h ON h.id = e.query_id
        WHERE e.user_id IS DISTINCT FROM h.user_id""",
}


def broken_rules(conn: psycopg.Connection) -> dict[str, list[Any]]:
    found = {name: conn.execute(query).fetchall() for name, query in RULES.items()}
    return {name: rows for name, rows in found.items() if rows}


def unfinished_jobs(conn: psycopg.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT id FROM jobs WHERE status = ANY(%s)", (list(UNFINISHED),))}


def unfinished_in_fixtures(history: History) -> set[str]:
    """The jobs the fixtures wrote as queued or running: an upgrade must neither finish nor lose them."""
    return {
        row["id"]
        for (table, _), row in history.rows.items()
        if table == "jobs" and row["status"] in UNFINISHED
    }


def rewritten_by_data_migrations(conn: psycopg.Connection, history: History) -> list[str]:
    """Rows written before a migration that fills a new column for them, checked against what it says."""
    problems: list[str] = []
    for (table, _), row in history.rows.items():
        era = history.era[table, _]
        if table == "questions" and era < "0013":
            # 0013: what students saw (active) is approved, what was archived rejected, the rest pending.
            expected = {"active": "approved", "archived": "rejected"}.get(row["status"], "pending")
            got = conn.execute("SELECT review_state FROM questions WHERE id = %s", (row["id"],)).fetchone()
            if got != (expected,):
                problems.append(f"question {row['id']} ({row['status']}): review_state {got}, not {expected}")
        if table == "question_attempts" and era < "0016":
            got = conn.execute("SELECT status FROM question_attempts WHERE id = %s", (row["id"],)).fetchone()
            if got != ("settled",):  # 0016: grades given before provisional grades existed are settled
                problems.append(f"attempt {row['id']}: status {got}, not settled")
        if table == "users" and era < "0018":
            got = conn.execute(
                "SELECT is_admin, password_hash, disabled_at FROM users WHERE id = %s", (row["id"],)
            ).fetchone()
            if got != (False, None, None):  # 0018: existing accounts keep signing in with keys only
                problems.append(f"user {row['id']}: (is_admin, password_hash, disabled_at) = {got}")
    return problems


def unit_vector(*head: float) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[: len(head)] = head
    return vector


async def searches(database_url: str, *, bm25: bool = True) -> dict[str, list[tuple[str, int, float]]]:
    """The retriever's lexical (BM25) and dense (exact and HNSW) candidates in the Biology project, as
    (document id, ordinal, score): chunk ids are stable across an upgrade, but these read better. BM25
    needs the lexeme statistics of migration 0009 (bm25=False before it)."""
    async with await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    ) as conn:
        await register_vector_async(conn)
        # Distinct weights on the fixtures' axes: no two chunks tie, so HNSW and exact agree on the order.
        query = unit_vector(1.0, 0.45, 0, 0, 0.3, 0.2, 0, 0.1, 0.05)
        # Counted here: project_chunk_stats, which the retriever reads for it, starts at migration 0002.
        cur = await conn.execute("SELECT count(*) AS n FROM chunks WHERE project_id = %s", (BIOLOGY,))
        size = int((await cur.fetchone() or {"n": 0})["n"])
        results: dict[str, list[tuple[int, float]]] = {}
        # A project smaller than exact_below is searched exactly: "exact" always is, "hnsw" never.
        for name, exact_below in (("exact", size), ("hnsw", 0)):
            dense = await dense_candidates(
                conn,
                project_id=BIOLOGY,
                query_vector=query,
                filters=Filters(),
                depth=5,
                exact_below=exact_below,
                ef_search=40,
                project_size=size,
            )
            results[name] = dense.rows
        if bm25:
            results["bm25"] = await lexical_candidates(
                conn,
                project_id=BIOLOGY,
                query="photosynthesis chloroplasts light",
                filters=Filters(),
                limit=5,
            )
        named: dict[str, list[tuple[str, int, float]]] = {}
        for name, rows in results.items():
            cur = await conn.execute(
                "SELECT id, document_id::text AS document, ordinal FROM chunks WHERE id = ANY(%s)",
                ([chunk_id for chunk_id, _ in rows],),
            )
            where = {row["id"]: (row["document"], row["ordinal"]) for row in await cur.fetchall()}
            named[name] = [(*where[chunk_id], round(score, 6)) for chunk_id, score in rows]
        return named

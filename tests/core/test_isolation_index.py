"""Project isolation under the shared HNSW index: no result from another project, and a small
project gets its full top-k even when the global neighbourhood belongs to other projects."""

import hashlib
from typing import Any
from uuid import UUID

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from psycopg_pool import AsyncConnectionPool

from core.retrieval import Retriever
from core.retrieval.dense import hnsw_candidates
from core.retrieval.filter_sql import filter_clause
from core.retrieval.rerankers.none import FusedOrder
from core.retrieval.types import Filters
from core.runtime.services import ServiceUrls
from core.settings.retrieval import RetrievalSettings
from core.store.accounts import accounts, projects
from core.store.content import chunks as chunk_store
from core.store.content import documents
from core.store.sql.pool import open_pool

DIM = 384
CROWD_PROJECTS, CROWD_SIZE, SMALL_SIZE = 20, 300, 12


class FixedQuery(Embeddings):
    """The query vector is chosen by the test, so the geometry of the index is known."""

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("not used")

    def embed_query(self, text: str) -> list[float]:
        return self.vector.tolist()


def unit(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


async def make_project(pool: AsyncConnectionPool, owner: Any, vectors: np.ndarray, word: str) -> UUID:
    async with pool.connection() as conn:
        project = await projects.create_project(conn, user_id=owner, name=word, description="", language="en")
        document = await documents.create_document(
            conn,
            project_id=project.id,
            user_id=owner,
            title=word,
            filename=f"{word}.md",
            source_type="markdown",
            kind="uploaded",
            content=word.encode(),
            content_hash=word,
        )
        assert document is not None
        rows = [
            chunk_store.ChunkRow(
                ordinal=i,
                text=f"{word} chunk {i} about shared memory",
                context_header=word,
                section_path=(word,),
                page_start=None,
                page_end=None,
                char_start=0,
                char_end=1,
                content_hash=hashlib.sha256(f"{word}{i}".encode()).hexdigest(),
                embedding=vector,
            )
            for i, vector in enumerate(vectors)
        ]
        async with conn.transaction():
            await chunk_store.insert_chunks(
                conn,
                project_id=project.id,
                document_id=document.id,
                version=1,
                chunks=rows,
                embedding_model="test",
                ts_config="english",
            )
    return project.id


@pytest.fixture(scope="module")
async def crowded_index(services: ServiceUrls) -> Any:
    rng = np.random.default_rng(7)
    query = unit(rng.normal(size=DIM))
    pool = await open_pool(services.database_url, max_size=4)
    async with pool.connection() as conn:
        owner = (await accounts.ensure_account(conn, email="crowd@example.org")).id
    crowd = []
    for p in range(CROWD_PROJECTS):
        # Every crowd vector sits close to the query: they fill the global neighbourhood.
        vectors = unit(query + 0.15 * rng.normal(size=(CROWD_SIZE, DIM)))
        crowd.append(await make_project(pool, owner, vectors, f"crowd{p}"))
    far = unit(rng.normal(size=(SMALL_SIZE, DIM)) - 0.5 * query)
    small = await make_project(pool, owner, far, "small")
    yield {"pool": pool, "query": query, "crowd": crowd, "small": small}
    await pool.close()


@pytest.mark.parametrize("exact_below", [0, 10_000], ids=["hnsw", "exact"])
async def test_small_project_gets_its_full_top_k(crowded_index: dict[str, Any], exact_below: int) -> None:
    config = RetrievalSettings(exact_below=exact_below, hnsw_ef_search=40, hnsw_max_scan_tuples=20_000)
    retriever = Retriever(crowded_index["pool"], FixedQuery(crowded_index["query"]), FusedOrder(), config)
    result = await retriever.search(
        project_id=crowded_index["small"], query="memory", profile="search", top_k=10
    )
    assert len(result.results) == 10
    assert {c.row["context_header"] for c in result.results} == {"small"}
    async with crowded_index["pool"].connection() as conn:
        cur = await conn.execute("SELECT id FROM chunks WHERE project_id = %s", (crowded_index["small"],))
        own = {row["id"] for row in await cur.fetchall()}
    # Every chunk of the project, none from the crowd: where the approximate scan misses one (seen in
    # CI: 11 of the 12 reached), the exact scan fills in.
    assert {c.chunk_id for c in result.dense} == own


@pytest.mark.parametrize("exact_below", [0, 10_000], ids=["hnsw", "exact"])
async def test_no_result_ever_comes_from_another_project(
    crowded_index: dict[str, Any], exact_below: int
) -> None:
    rng = np.random.default_rng(11)
    pool = crowded_index["pool"]
    for project_id in crowded_index["crowd"][:8]:
        vector = unit(crowded_index["query"] + 0.2 * rng.normal(size=DIM))
        retriever = Retriever(
            pool, FixedQuery(vector), FusedOrder(), RetrievalSettings(exact_below=exact_below)
        )
        result = await retriever.search(
            project_id=project_id, query="shared memory", profile="search", top_k=50
        )
        ids = [c.chunk_id for c in result.fused]
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT DISTINCT project_id FROM chunks WHERE id = ANY(%s)", (ids,))
            owners = {row["project_id"] for row in await cur.fetchall()}
        assert owners == {project_id}
        assert len(result.results) == 50
        assert len(result.dense) == 100


async def test_a_short_approximate_scan_is_answered_exactly(crowded_index: dict[str, Any]) -> None:
    """With a scan cap of one tuple, pgvector returns only what its first walk of the crowd's neighbourhood
    saw; the small, far project must still get every chunk, in the exact order."""
    pool, project_id, query = crowded_index["pool"], crowded_index["small"], crowded_index["query"]
    clause, params = filter_clause(Filters(), None)
    params |= {"project_id": project_id, "query": query, "depth": 100}
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL hnsw.max_scan_tuples = 1")
        approximate = await hnsw_candidates(conn, clause, params, ef_search=40, depth=100)
    assert len(approximate) < SMALL_SIZE  # the case under test: the graph walk alone falls short

    def search(config: RetrievalSettings) -> Any:
        retriever = Retriever(pool, FixedQuery(query), FusedOrder(), config)
        return retriever.search(project_id=project_id, query="memory", profile="search", top_k=10)

    short = await search(RetrievalSettings(exact_below=0, hnsw_max_scan_tuples=1))
    exact = await search(RetrievalSettings(exact_below=10_000))
    assert (short.dense_scan, exact.dense_scan) == ("hnsw+exact", "exact")
    assert len(exact.dense) == SMALL_SIZE
    assert [c.chunk_id for c in short.dense] == [c.chunk_id for c in exact.dense]
    assert [c.chunk_id for c in short.results] == [c.chunk_id for c in exact.results]

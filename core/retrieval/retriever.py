"""The one project-scoped hybrid retriever: dense + BM25 -> RRF -> rerank -> the profile's top-k.

Every agent, the search API and the evals call `Retriever.search`; project_id always comes from
the application (a route's membership check or a job), never from a model."""

import asyncio
from uuid import UUID

import numpy as np
from langchain_core.embeddings import Embeddings
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from core.observability import timing
from core.retrieval.dense import DenseCandidates, dense_candidates, project_chunk_count
from core.retrieval.fusion import reciprocal_rank_fusion
from core.retrieval.hydrate import hydrate
from core.retrieval.lexical import lexical_candidates
from core.retrieval.profiles import Profile, ProfileError, get_profile
from core.retrieval.rerankers.base import Reranker
from core.retrieval.types import Candidate, Filters, RetrievalResult, StageTimings
from core.settings.retrieval import RetrievalSettings

# Added to a preferred-section candidate's rerank score (scores are 0..1): it comes first.
SECTION_BOOST = 1.0


class Retriever:
    def __init__(
        self, pool: AsyncConnectionPool, embeddings: Embeddings, reranker: Reranker, config: RetrievalSettings
    ) -> None:
        self.pool = pool
        self.embeddings = embeddings
        self.reranker = reranker
        self.config = config

    async def search(
        self,
        *,
        project_id: UUID,
        query: str,
        profile: str = "qa",
        top_k: int | None = None,
        filters: Filters = Filters(),
        prefer_section: tuple[str, ...] = (),
        user_id: UUID | None = None,
        reranker: Reranker | None = None,
    ) -> RetrievalResult:
        """`user_id`, when given, is checked for membership inside every query as well."""
        chosen = get_profile(profile)
        _check_profile(chosen, filters, prefer_section)
        k = min(top_k or chosen.top_k, chosen.max_top_k)
        rerank = reranker or self.reranker
        timings = StageTimings()
        started = timing.mark()

        query_vector = np.asarray(
            await asyncio.to_thread(self.embeddings.embed_query, query), dtype=np.float32
        )
        timings.embed_ms = timing.elapsed_ms(started)
        async with self.pool.connection() as conn, conn.transaction():
            # One snapshot for all the reads, so a concurrent reindex cannot mix two versions.
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            dense, lexical_scores = await self._candidates(
                conn, project_id, query, query_vector, filters, user_id, timings
            )
            mark = timing.mark()
            lexical_ids = [chunk_id for chunk_id, _ in lexical_scores[: self.config.candidate_depth]]
            fused = reciprocal_rank_fusion([i for i, _ in dense.rows], lexical_ids, k=self.config.rrf_k)
            bm25 = dict(lexical_scores)
            for candidate in fused:
                candidate.lexical_score = bm25.get(candidate.chunk_id, 0.0)
            timings.fuse_ms = timing.elapsed_ms(mark)
            mark = timing.mark()
            pool_for_rerank = await hydrate(
                conn,
                project_id=project_id,
                query_vector=query_vector,
                candidates=fused[: self.config.rerank_depth],
            )
            timings.hydrate_ms = timing.elapsed_ms(mark)

        mark = timing.mark()
        scores = await rerank.score(query, pool_for_rerank)
        for candidate, score in zip(pool_for_rerank, scores, strict=True):
            in_section = (
                prefer_section
                and tuple(candidate.row["section_path"][: len(prefer_section)]) == prefer_section
            )
            candidate.rerank_score = score + (SECTION_BOOST if in_section else 0.0)
        reranked = sorted(
            pool_for_rerank, key=lambda c: (-(c.rerank_score or 0.0), -c.fused_score, c.chunk_id)
        )
        timings.rerank_ms = timing.elapsed_ms(mark)
        timings.total_ms = timing.elapsed_ms(started)
        by_id = {c.chunk_id: c for c in fused}
        return RetrievalResult(
            query=query,
            profile=chosen.name,
            reranker=rerank.name,
            results=reranked[:k],
            dense=[_listed(by_id, i, dense_similarity=1 - d) for i, d in dense.rows],
            dense_scan=dense.scan,
            lexical=[_listed(by_id, i) for i in lexical_ids],
            fused=fused,
            reranked=reranked,
            timings=timings,
        )

    async def _candidates(
        self,
        conn: AsyncConnection,
        project_id: UUID,
        query: str,
        query_vector: np.ndarray,
        filters: Filters,
        user_id: UUID | None,
        timings: StageTimings,
    ) -> tuple[DenseCandidates, list[tuple[int, float]]]:
        config = self.config
        mark = timing.mark()
        size = await project_chunk_count(conn, project_id=project_id)
        await conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {int(config.hnsw_max_scan_tuples)}")
        dense = await dense_candidates(
            conn,
            project_id=project_id,
            query_vector=query_vector,
            filters=filters,
            user_id=user_id,
            depth=config.candidate_depth,
            exact_below=config.exact_below,
            ef_search=config.hnsw_ef_search,
            project_size=size,
        )
        timings.dense_ms = timing.elapsed_ms(mark)
        mark = timing.mark()
        lexical = await lexical_candidates(
            conn,
            project_id=project_id,
            query=query,
            filters=filters,
            user_id=user_id,
            limit=config.candidate_depth,
            budget=config.lexical_budget,
            also_score=[chunk_id for chunk_id, _ in dense.rows],
            k1=config.bm25_k1,
            b=config.bm25_b,
        )
        timings.lexical_ms = timing.elapsed_ms(mark)
        return dense, lexical


def _check_profile(profile: Profile, filters: Filters, prefer_section: tuple[str, ...]) -> None:
    if profile.needs_document and len(filters.document_ids) != 1:
        raise ProfileError(f"the {profile.name} profile needs exactly one document_id filter")
    if profile.needs_document_or_section and not (filters.document_ids or filters.section):
        raise ProfileError(f"the {profile.name} profile needs a document_id or section filter")
    if prefer_section and not profile.prefers_section:
        raise ProfileError(f"the {profile.name} profile does not take a preferred section")


def _listed(by_id: dict[int, Candidate], chunk_id: int, dense_similarity: float | None = None) -> Candidate:
    candidate = by_id[chunk_id]
    if dense_similarity is not None and candidate.dense_similarity is None:
        candidate.dense_similarity = dense_similarity
    return candidate

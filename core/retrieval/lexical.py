"""Lexical candidates ranked by BM25, computed in Postgres.

`ts_rank` has no inverse document frequency, so it ranks like a bag of words. Here every chunk of
the project that contains any query lexeme is a candidate (GIN index on `tsv`); since a chunk
holding term t always matches the OR-query, the document frequency of t within the project is
exactly the number of candidates holding it. N and the average length come from
`project_chunk_stats`. Query lexemes are made with each configuration the project's chunks use, so
English, Portuguese and 'simple' chunks are each matched in their own language. The optional
filters narrow the returned chunks, never the statistics."""

from uuid import UUID

from psycopg import AsyncConnection

from core.retrieval.filter_sql import filter_clause
from core.retrieval.types import Filters

_BM25 = """
WITH stats AS (
    SELECT ts_config, chunk_count FROM project_chunk_stats
    WHERE project_id = %(project_id)s AND chunk_count > 0
),
totals AS (
    SELECT greatest(sum(s.chunk_count), 1)::float8 AS n,
           greatest(sum(p.total_len)::float8 / greatest(sum(s.chunk_count), 1), 1) AS avgdl
    FROM stats s JOIN project_chunk_stats p
      ON p.project_id = %(project_id)s AND p.ts_config = s.ts_config
),
query_lexemes AS (
    SELECT s.ts_config, t.lexeme
    FROM stats s, unnest(to_tsvector(s.ts_config, %(query)s)) t
),
query_ts AS (
    SELECT ts_config, string_agg(quote_literal(lexeme), ' | ')::tsquery AS tsq, array_agg(lexeme) AS lexemes
    FROM query_lexemes GROUP BY ts_config
),
candidates AS MATERIALIZED (
    SELECT c.id, c.tsv, c.ts_config, c.lex_len, q.lexemes, (TRUE{filters}) AS wanted
    FROM query_ts q JOIN chunks c ON c.ts_config = q.ts_config
    WHERE c.project_id = %(project_id)s AND c.tsv @@ q.tsq
),
term_freqs AS MATERIALIZED (
    -- An array test, not a join on the lexemes: each tsvector is unnested once, not once per lexeme.
    SELECT c.id, c.wanted, c.lex_len, c.ts_config, u.lexeme,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM candidates c, unnest(c.tsv) u
    WHERE u.lexeme = ANY(c.lexemes)
),
doc_freqs AS (
    SELECT ts_config, lexeme, count(*)::float8 AS df FROM term_freqs GROUP BY ts_config, lexeme
)
SELECT f.id,
       sum(ln(1 + (t.n - d.df + 0.5) / (d.df + 0.5))
           * f.tf * (%(k1)s + 1) / (f.tf + %(k1)s * (1 - %(b)s + %(b)s * f.lex_len / t.avgdl))) AS score
FROM term_freqs f JOIN doc_freqs d USING (ts_config, lexeme) CROSS JOIN totals t
WHERE f.wanted
GROUP BY f.id
ORDER BY score DESC, f.id
LIMIT %(limit)s
"""


async def lexical_candidates(
    conn: AsyncConnection,
    *,
    project_id: UUID,
    query: str,
    filters: Filters,
    user_id: UUID | None = None,
    limit: int,
    k1: float = 0.9,
    b: float = 0.4,
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score), best first; `limit` may exceed the list depth so that rescoring
    knows the BM25 score of chunks found only by the dense side."""
    clause, params = filter_clause(filters, user_id)
    params |= {"project_id": project_id, "query": query, "limit": limit, "k1": k1, "b": b}
    cur = await conn.execute(_BM25.format(filters=clause), params)  # type: ignore[arg-type]
    return [(row["id"], float(row["score"])) for row in await cur.fetchall()]

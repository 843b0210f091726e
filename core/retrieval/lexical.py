"""Lexical candidates ranked by BM25, computed in Postgres.

`ts_rank` has no inverse document frequency, so it ranks like a bag of words. Here the document
frequency of each query lexeme comes from `project_lexeme_stats`, N and the average length from
`project_chunk_stats`, both kept exact by triggers. Query lexemes are made with each configuration
the project's chunks use, so English, Portuguese and 'simple' chunks are matched in their own
language.

Which chunks get scored: those holding one of the query's rarer lexemes, rarest first, as long as
their document frequencies add up to at most `budget` chunks (when even the rarest is more common
than that, those holding the two rarest together), plus the chunks the dense side found. A chunk
holding only the query's most common terms can score at most their small idf, so it rarely belongs
in the top list, and reading tens of thousands of them in a large project is what made BM25 slow.
Below the budget every matching chunk is scored. Every score is exact BM25; the optional filters
narrow the returned chunks, never the statistics."""

from collections.abc import Sequence
from uuid import UUID

from psycopg import AsyncConnection

from core.retrieval.filter_sql import filter_clause
from core.retrieval.types import Filters

BM25_SQL = """
WITH stats AS (
    SELECT ts_config, chunk_count, total_len FROM project_chunk_stats
    WHERE project_id = %(project_id)s AND chunk_count > 0
),
totals AS (
    SELECT greatest(sum(chunk_count), 1)::float8 AS n,
           greatest(sum(total_len)::float8 / greatest(sum(chunk_count), 1), 1) AS avgdl
    FROM stats
),
query_lexemes AS (
    SELECT DISTINCT s.ts_config, t.lexeme FROM stats s, unnest(to_tsvector(s.ts_config, %(query)s)) t
),
known AS (
    SELECT q.ts_config, q.lexeme, l.df::float8 AS df,
           sum(l.df) OVER (ORDER BY l.df, q.lexeme ROWS UNBOUNDED PRECEDING) AS covered,
           row_number() OVER (ORDER BY l.df, q.lexeme) AS rarity
    FROM query_lexemes q JOIN project_lexeme_stats l
      ON l.project_id = %(project_id)s AND l.ts_config = q.ts_config AND l.lexeme = q.lexeme
    WHERE l.df > 0
),
per_config AS (
    -- When even the rarest lexeme is over the budget, chunks holding the two rarest together pick.
    SELECT ts_config, array_agg(lexeme) AS lexemes,
           coalesce(string_agg(quote_literal(lexeme), ' | ') FILTER (WHERE covered <= %(budget)s),
                    string_agg(quote_literal(lexeme), ' & ') FILTER (WHERE rarity <= 2))::tsquery AS picking
    FROM known GROUP BY ts_config
),
picked AS (
    SELECT c.id, c.tsv, c.ts_config, c.lex_len FROM per_config p JOIN chunks c ON c.ts_config = p.ts_config
    WHERE c.project_id = %(project_id)s AND p.picking IS NOT NULL AND c.tsv @@ p.picking{filters}
),
candidates AS (
    SELECT * FROM picked
    UNION ALL  -- the dense side's chunks that the picking terms missed, read once by primary key
    SELECT c.id, c.tsv, c.ts_config, c.lex_len FROM chunks c
    WHERE c.project_id = %(project_id)s AND c.id = ANY(%(also)s::bigint[]){filters}
      AND NOT EXISTS (SELECT 1 FROM per_config p
                      WHERE p.ts_config = c.ts_config AND p.picking IS NOT NULL AND c.tsv @@ p.picking)
),
term_freqs AS MATERIALIZED (
    -- setweight/ts_filter keep only the query's lexemes in C, so few rows are unnested per chunk.
    SELECT c.id, c.lex_len, c.ts_config, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM candidates c JOIN per_config p ON p.ts_config = c.ts_config,
    unnest(ts_filter(setweight(setweight(c.tsv, 'D'), 'A', p.lexemes), '{{a}}')) u
)
SELECT f.id,
       sum(ln(1 + (t.n - k.df + 0.5) / (k.df + 0.5))
           * f.tf * (%(k1)s + 1) / (f.tf + %(k1)s * (1 - %(b)s + %(b)s * f.lex_len / t.avgdl))) AS score
FROM term_freqs f JOIN known k USING (ts_config, lexeme) CROSS JOIN totals t
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
    budget: int = 1000,
    also_score: Sequence[int] = (),
    k1: float = 0.9,
    b: float = 0.4,
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score), best first, at most `limit` + len(also_score) of them. `also_score`
    (the dense candidates) are scored too, so that rescoring knows their BM25 score; one that holds
    no query term is left out."""
    clause, params = filter_clause(filters, user_id)
    params |= {
        "project_id": project_id,
        "query": query,
        "limit": limit + len(also_score),
        "budget": budget,
        "also": list(also_score),
        "k1": k1,
        "b": b,
    }
    cur = await conn.execute(BM25_SQL.format(filters=clause), params)  # type: ignore[arg-type]
    return [(row["id"], float(row["score"])) for row in await cur.fetchall()]

-- BM25-grade lexical ranking needs each chunk's length in tokens and per-project totals.

-- Tokens in a tsvector (positions of every lexeme), i.e. the chunk length BM25 normalises by.
CREATE FUNCTION tsvector_token_count(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer FROM unnest($1) u);

ALTER TABLE chunks ADD COLUMN lex_len integer GENERATED ALWAYS AS (
    tsvector_token_count(to_tsvector(ts_config, context_header || E'\n' || text))) STORED;

-- Chunk count and total length per project and text-search configuration, kept exact by
-- statement-level triggers, so a query reads N and the average length in O(1).
CREATE TABLE project_chunk_stats (
    project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    ts_config    regconfig NOT NULL,
    chunk_count  bigint NOT NULL DEFAULT 0,
    total_len    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (project_id, ts_config)
);

INSERT INTO project_chunk_stats (project_id, ts_config, chunk_count, total_len)
SELECT project_id, ts_config, count(*), coalesce(sum(lex_len), 0) FROM chunks GROUP BY 1, 2;

CREATE FUNCTION chunks_stats_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO project_chunk_stats AS s (project_id, ts_config, chunk_count, total_len)
    SELECT project_id, ts_config, count(*), coalesce(sum(lex_len), 0) FROM new_rows
    GROUP BY project_id, ts_config ORDER BY project_id, ts_config
    ON CONFLICT (project_id, ts_config) DO UPDATE
        SET chunk_count = s.chunk_count + EXCLUDED.chunk_count, total_len = s.total_len + EXCLUDED.total_len;
    RETURN NULL;
END $$;

CREATE FUNCTION chunks_stats_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE project_chunk_stats s
    SET chunk_count = s.chunk_count - d.n, total_len = s.total_len - d.len
    FROM (SELECT project_id, ts_config, count(*) AS n, coalesce(sum(lex_len), 0) AS len
          FROM old_rows GROUP BY project_id, ts_config ORDER BY project_id, ts_config) d
    WHERE s.project_id = d.project_id AND s.ts_config = d.ts_config;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_stats_after_insert();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_stats_after_delete();

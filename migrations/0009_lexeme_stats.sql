-- Document frequency of every lexeme per project and text-search configuration, kept exact by
-- statement-level triggers. With it a BM25 query no longer has to read every chunk that holds a
-- common query term just to count them: the rare terms pick the candidates, the counts come from
-- here (core/retrieval/lexical.py).
CREATE TABLE project_lexeme_stats (
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    ts_config   regconfig NOT NULL,
    lexeme      text NOT NULL,
    df          integer NOT NULL,
    PRIMARY KEY (project_id, ts_config, lexeme)
);

INSERT INTO project_lexeme_stats (project_id, ts_config, lexeme, df)
SELECT c.project_id, c.ts_config, u.lexeme, count(*)
FROM chunks c, unnest(c.tsv) u GROUP BY 1, 2, 3;

-- Two jobs writing chunks of one project would otherwise lock lexeme rows in interleaved orders
-- (delete then insert) and could deadlock; a per-project transaction lock serialises the writes.
CREATE FUNCTION lock_projects_for_lexeme_stats(project_ids uuid[]) RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('lexeme_stats:' || p::text, 0))
    FROM (SELECT DISTINCT unnest(project_ids) AS p ORDER BY 1) ids;
$$;

CREATE FUNCTION chunks_lexemes_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lock_projects_for_lexeme_stats(ARRAY(SELECT DISTINCT project_id FROM new_rows));
    INSERT INTO project_lexeme_stats AS s (project_id, ts_config, lexeme, df)
    SELECT n.project_id, n.ts_config, u.lexeme, count(*) FROM new_rows n, unnest(n.tsv) u
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (project_id, ts_config, lexeme) DO UPDATE SET df = s.df + EXCLUDED.df;
    RETURN NULL;
END $$;

CREATE FUNCTION chunks_lexemes_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM lock_projects_for_lexeme_stats(ARRAY(SELECT DISTINCT project_id FROM old_rows));
    UPDATE project_lexeme_stats s SET df = s.df - g.n
    FROM (SELECT o.project_id, o.ts_config, u.lexeme, count(*) AS n FROM old_rows o, unnest(o.tsv) u
          GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) g
    WHERE s.project_id = g.project_id AND s.ts_config = g.ts_config AND s.lexeme = g.lexeme;
    -- A separate statement: one statement may not update and delete the same row.
    DELETE FROM project_lexeme_stats s
    USING (SELECT DISTINCT o.project_id, o.ts_config, u.lexeme FROM old_rows o, unnest(o.tsv) u) g
    WHERE s.df <= 0 AND s.project_id = g.project_id AND s.ts_config = g.ts_config AND s.lexeme = g.lexeme;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_lexemes_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_lexemes_after_insert();
CREATE TRIGGER chunks_lexemes_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_lexemes_after_delete();

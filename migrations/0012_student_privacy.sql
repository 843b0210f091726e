-- Issue 11 parts 4-5: students' privacy and attempt limits (DATA_MODEL.md "Students' privacy").

-- How many graded attempts one member may make at one question; NULL: unlimited. Set by owners.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS max_attempts_per_question integer DEFAULT 3
    CHECK (max_attempts_per_question >= 1);

-- An evaluation belongs to the member whose question and answer it copies: they read it, and owners;
-- other members read only the aggregates. Backfilled from the query it judged where that still exists.
ALTER TABLE rag_evaluations ADD COLUMN IF NOT EXISTS user_id uuid REFERENCES users(id) ON DELETE SET NULL;
UPDATE rag_evaluations e SET user_id = h.user_id
    FROM query_history h WHERE h.id = e.query_id AND h.project_id = e.project_id AND e.user_id IS NULL;
CREATE INDEX IF NOT EXISTS rag_evaluations_user_idx ON rag_evaluations (project_id, user_id);
-- The retention purges delete by age across projects.
CREATE INDEX IF NOT EXISTS rag_evaluations_created_idx ON rag_evaluations (created_at);
CREATE INDEX IF NOT EXISTS question_attempts_created_idx ON question_attempts (created_at);
CREATE INDEX IF NOT EXISTS qa_threads_updated_idx ON qa_threads (updated_at);

-- What leaving a project (removed, left, or the user deleted) does to the member's personal rows in it:
-- their QA threads (and so their messages) and their attempts are deleted; their query history and
-- evaluations are anonymised (user_id NULL, question/answer text and claims removed) so the class's
-- aggregates (counts, timings, tokens, groundedness, flagged share) stay right.
CREATE OR REPLACE FUNCTION forget_member(p_project uuid, p_user uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM qa_threads WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM question_attempts WHERE project_id = p_project AND user_id = p_user;
    UPDATE rag_evaluations e SET user_id = NULL, question = '', answer = '', claims = '[]'::jsonb
        WHERE e.project_id = p_project
          AND (e.user_id = p_user
               OR e.query_id IN (SELECT h.id FROM query_history h
                                 WHERE h.project_id = p_project AND h.user_id = p_user));
    UPDATE query_history SET user_id = NULL, question = '', answer = NULL
        WHERE project_id = p_project AND user_id = p_user;
END;
$$;

-- A database-level guarantee: whatever deletes the membership row (the members route, leaving, a
-- deleted user's cascade, an operator's SQL) forgets the member in the same transaction. A whole
-- project's deletion cascades over these rows anyway, so it is skipped.
CREATE OR REPLACE FUNCTION project_members_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM projects p WHERE p.id = OLD.project_id) THEN
        PERFORM forget_member(OLD.project_id, OLD.user_id);
    END IF;
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS project_members_forget ON project_members;
CREATE TRIGGER project_members_forget AFTER DELETE ON project_members
    FOR EACH ROW EXECUTE FUNCTION project_members_forget();

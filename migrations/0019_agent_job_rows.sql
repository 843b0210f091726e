-- Judge and study-optimizer jobs are recorded like the other jobs (issue 31, "The last faults";
-- DATA_MODEL.md "Jobs and workers"). Until now only arq (Redis) knew of them, so a Redis restart lost
-- them; with a jobs row a starting worker enqueues them again, and a killed worker's job reruns with its
-- deaths counted. 'judge' (id 'judge:{query_id}'): one sampled QA answer's groundedness judgement.
-- 'optimize_study' (id 'study-optimize:{project_id}:{user_id}'): one student's FSRS fit, created_by the
-- student. Both keep what they produced in `result` (ids and scores, never the student's text).
-- IF [NOT] EXISTS: another migration may widen the same check or add the same column.
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
    CHECK (kind IN ('index', 'write_note', 'judge', 'optimize_study'));

-- A judge job belongs to the history row it judges: whatever deletes that row (the retention purge, the
-- student erasing their history, the project's deletion) deletes the job's row in the same statement.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS query_id uuid;
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_query_fkey;
ALTER TABLE jobs ADD CONSTRAINT jobs_query_fkey FOREIGN KEY (project_id, query_id)
    REFERENCES query_history (project_id, id) ON DELETE CASCADE;
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_judge_query_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_judge_query_check CHECK (kind <> 'judge' OR query_id IS NOT NULL);
-- The cascade finds a purged query's job by this index; without it each deleted history row scans jobs.
CREATE INDEX IF NOT EXISTS jobs_query_idx ON jobs (query_id) WHERE query_id IS NOT NULL;

-- Leaving a project also deletes the member's judge and optimize rows there: a judge row names the
-- student (created_by) next to the query it judges, which forgetting anonymises, and an optimize row is
-- the student's own. 0014's statements are kept as they were.
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
    DELETE FROM study_cards WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM study_reviews WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM study_settings WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM jobs WHERE project_id = p_project AND created_by = p_user
                       AND kind IN ('judge', 'optimize_study');
END;
$$;

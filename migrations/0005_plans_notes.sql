-- Content Planner outlines, and note-writing jobs next to the indexing jobs.

-- One stored outline per planning request. topic is NULL when the whole project was planned;
-- outline holds {query, retrieved, sections: [{title, goal, chunk_ids, sources, support, relevance,
-- coverage}], gaps: [{title, goal, reason, coverage}], unassigned_chunk_ids} as the planner built it.
CREATE TABLE plans (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    topic       text CHECK (length(topic) BETWEEN 1 AND 300),
    outline     jsonb NOT NULL,
    created_by  uuid NOT NULL REFERENCES users(id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, id)
);
CREATE INDEX plans_project_idx ON plans (project_id, created_at);

-- The jobs table also tracks note writing ('write_note', id 'note:{uuid}'): its document_id is the
-- generated note once the job succeeded, and result holds what the job produced.
-- IF [NOT] EXISTS: another migration may widen the same check or add the same column.
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('index', 'write_note'));
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS result jsonb;

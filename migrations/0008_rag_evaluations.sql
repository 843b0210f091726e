-- Sampled groundedness judgements of RAG QA answers (workers/judge_jobs.py), and a per-project
-- sampling rate that overrides GROUNDEDNESS_SAMPLE_RATE.

ALTER TABLE projects ADD COLUMN IF NOT EXISTS groundedness_sample_rate real
    CHECK (groundedness_sample_rate BETWEEN 0 AND 1);

-- question and answer are copied from the query so an evaluation outlives the history's retention;
-- query_id is then set NULL (only that column: project_id stays). One evaluation per query.
CREATE TABLE rag_evaluations (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id          uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    query_id            uuid,
    run_id              uuid,
    question            text NOT NULL,
    answer              text NOT NULL,
    claims              jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(claims) = 'array'),
    groundedness        real NOT NULL CHECK (groundedness BETWEEN 0 AND 1),
    relevance           real NOT NULL CHECK (relevance BETWEEN 0 AND 1),
    hallucination_risk  real NOT NULL CHECK (hallucination_risk BETWEEN 0 AND 1),
    flagged             boolean NOT NULL,
    judge_model         text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (project_id, query_id) REFERENCES query_history (project_id, id) ON DELETE SET NULL (query_id)
);
CREATE INDEX rag_evaluations_project_idx ON rag_evaluations (project_id, created_at);
CREATE UNIQUE INDEX rag_evaluations_query_idx ON rag_evaluations (query_id) WHERE query_id IS NOT NULL;

-- An audit row per agent request (QA, planner, writer, generator, evaluator): who asked what, which
-- chunks were retrieved and cited, stage timings and tokens per model, and the ids that tie it to the
-- request's log line (request_id) and its LangGraph/LangSmith run (run_id). No prompts, no chunk text.
-- Rows older than QUERY_HISTORY_RETENTION_DAYS are purged by the worker (workers/judge_jobs.py).
-- The chunk ids are not foreign keys: a reindex retires chunk ids, the history keeps what was used.
CREATE TABLE query_history (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id           uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id              uuid REFERENCES users(id) ON DELETE SET NULL,
    agent                text NOT NULL CHECK (agent IN ('qa', 'planner', 'writer', 'generator', 'evaluator')),
    question             text NOT NULL,
    answer               text,
    outcome              text,
    retrieved_chunk_ids  bigint[] NOT NULL DEFAULT '{}',
    cited_chunk_ids      bigint[] NOT NULL DEFAULT '{}',
    timings_ms           jsonb NOT NULL DEFAULT '{}'::jsonb,
    tokens               jsonb NOT NULL DEFAULT '{}'::jsonb,
    request_id           text,
    run_id               uuid,
    created_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, id)
);
CREATE INDEX query_history_project_idx ON query_history (project_id, created_at);
-- The retention purge deletes across projects by age.
CREATE INDEX query_history_created_idx ON query_history (created_at);

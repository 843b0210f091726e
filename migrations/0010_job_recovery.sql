-- Jobs survive a killed worker (issue 10, part 4; DATA_MODEL.md "Jobs and workers").
-- deaths: attempts that ended because the worker process died under the job (an attempt that starts
-- and finds the previous one still 'running' counts one); at JOB_MAX_DEATHS the job fails as a poison
-- pill. created_by: who asked for the job, so a write_note job lost with Redis can be queued again.
-- IF NOT EXISTS: another migration may add the same column.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS deaths integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS created_by uuid REFERENCES users(id) ON DELETE SET NULL;

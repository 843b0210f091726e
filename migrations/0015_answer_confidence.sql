-- An answer's calibrated confidence (core/confidence, agents/qa/confidence.py): {p, label, signals},
-- kept with the history row so the teacher's history and flagged answers show how sure the answer was.
-- NULL for replies that claim no answer, for other agents, and for rows written before this migration.
ALTER TABLE query_history ADD COLUMN confidence jsonb;

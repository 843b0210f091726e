-- Issue 28 (grading): a model grade labelled low by the calibration (core/confidence) is provisional
-- until an owner confirms or corrects it (DATA_MODEL.md "Provisional grades"). Existing rows are settled.
ALTER TABLE question_attempts
    ADD COLUMN confidence jsonb,  -- the grade's {p, label, signals}; NULL: exact or ungraded by a model
    ADD COLUMN status text NOT NULL DEFAULT 'settled'
        CHECK (status IN ('settled', 'provisional', 'confirmed', 'corrected')),
    ADD COLUMN model_score real CHECK (model_score BETWEEN 0 AND 1),  -- the grader's own grade, kept
    ADD COLUMN model_verdict text                                     -- when an owner corrects it
        CHECK (model_verdict IN ('correct', 'partially_correct', 'incorrect')),
    ADD COLUMN reviewed_by uuid REFERENCES users(id) ON DELETE SET NULL,
    ADD COLUMN reviewed_at timestamptz;

-- The teacher's review queue: a project's provisional attempts, oldest first.
CREATE INDEX question_attempts_provisional_idx ON question_attempts (project_id, created_at)
    WHERE status = 'provisional';

-- An owner's review of a provisional grade is a project event (security_events, migration 0011).
ALTER TABLE security_events DROP CONSTRAINT security_events_action_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_action_check CHECK (action IN (
    'key.created', 'key.revoked',
    'member.added', 'member.role_changed', 'member.removed', 'member.left',
    'document.deleted', 'project.created', 'project.updated', 'project.deleted',
    'attempt.reviewed'));

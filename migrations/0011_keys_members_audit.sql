-- Issue 11 parts 2-3: key expiry and the security event log (DATA_MODEL.md "Keys, members and the
-- security log").
-- expires_at: NULL never expires; a key past it fails like a revoked one. last_used_at (0001) is now
-- written at most once a minute per key, not on every request.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz;

-- Security-relevant actions: who (actor_user_id; NULL for the operator's CLI or a deleted user), what
-- (action, target ids, small JSON details: never key material or document text), when, request id.
-- project_id is a plain column, not a foreign key, so a project's events (its deletion included) outlive
-- it for the operator; only owners of a live project read them through the API. NULL: a user-level
-- event (a key created or revoked), read by that user (target_user_id) through GET /me/audit.
CREATE TABLE security_events (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id      uuid,
    actor_user_id   uuid REFERENCES users(id) ON DELETE SET NULL,
    action          text NOT NULL CHECK (action IN (
                        'key.created', 'key.revoked',
                        'member.added', 'member.role_changed', 'member.removed', 'member.left',
                        'document.deleted', 'project.created', 'project.updated', 'project.deleted')),
    target_user_id  uuid REFERENCES users(id) ON DELETE SET NULL,
    target_id       text,
    details         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    request_id      text,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX security_events_project_idx ON security_events (project_id, id) WHERE project_id IS NOT NULL;
CREATE INDEX security_events_user_idx ON security_events (target_user_id, id) WHERE project_id IS NULL;
CREATE INDEX security_events_created_idx ON security_events (created_at);

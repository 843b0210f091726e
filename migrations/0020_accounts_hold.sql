-- Issue 39: accounts that hold when a student tries (DATA_MODEL.md "Accounts, sessions and sign-in").
-- Teachers (who may create projects when PROJECT_CREATORS=teachers), invitations addressed to one person
-- (an owner adds someone by email: they accept it, nobody is added silently), a school login linked from
-- the account screen, and the events of credentials ending together.

-- is_teacher: set by an administrator (or an LMS instructor's launch); with PROJECT_CREATORS=teachers only
-- teachers and administrators create projects.
ALTER TABLE users ADD COLUMN IF NOT EXISTS is_teacher boolean NOT NULL DEFAULT false;

-- email_verified_at: when someone showed the address is theirs, or someone trusted vouched for it: an
-- administrator or the operator made the account, the school's login vouched (email_verified), or a reset
-- link (which reaches only the address's mailbox or an administrator) was used. A password sign-up or an
-- LMS launch proves nothing of the address. Invitations addressed to an e-mail are for proven addresses
-- only. Existing accounts: administrators and accounts with a school login count as proven.
ALTER TABLE users ADD COLUMN IF NOT EXISTS email_verified_at timestamptz;
UPDATE users u SET email_verified_at = u.created_at
    WHERE u.email_verified_at IS NULL
      AND (u.is_admin OR EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id AND i.kind = 'oidc'));

-- A personal invitation: an owner invited this (lower-case) email with a role. The account with that email
-- sees it once signed in and accepts or declines it (answered_at, accepted); an owner may withdraw it
-- (revoked_at). At most one pending per (project, email): inviting again replaces its role and expiry.
CREATE TABLE IF NOT EXISTS member_invitations (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    email       text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
    role        text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    invited_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    answered_at timestamptz,
    accepted    boolean,
    revoked_at  timestamptz,
    CHECK ((answered_at IS NULL) = (accepted IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS member_invitations_pending_idx ON member_invitations (project_id, email)
    WHERE answered_at IS NULL AND revoked_at IS NULL;
CREATE INDEX IF NOT EXISTS member_invitations_email_idx ON member_invitations (email)
    WHERE answered_at IS NULL AND revoked_at IS NULL;

-- An OIDC sign-in started from the account screen links the school login to this signed-in account.
ALTER TABLE auth_flows ADD COLUMN IF NOT EXISTS link_user_id uuid REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE security_events DROP CONSTRAINT security_events_action_check;
ALTER TABLE security_events ADD CONSTRAINT security_events_action_check CHECK (action IN (
    'key.created', 'key.revoked',
    'member.added', 'member.role_changed', 'member.removed', 'member.left', 'member.joined',
    'document.deleted', 'project.created', 'project.updated', 'project.deleted',
    'attempt.reviewed',
    'invitation.created', 'invitation.revoked',
    'user.created', 'user.disabled', 'user.enabled', 'user.admin_granted',
    'password.changed', 'password.reset_issued', 'password.reset_used',
    'session.created', 'session.revoked', 'signin.failed',
    'identity.linked', 'lti.platform_registered', 'lti.platform_removed', 'lti.launch',
    'invitation.sent', 'invitation.accepted', 'invitation.declined', 'invitation.withdrawn',
    'credentials.revoked', 'password.removed', 'password.reset_requested',
    'user.teacher_granted', 'user.teacher_revoked', 'mail.sent'));
-- 'mail.sent' (details: kind, recipients) is also the per-sender daily mail budget (MAIL_PER_USER_DAY).
CREATE INDEX IF NOT EXISTS security_events_mail_idx ON security_events (actor_user_id, created_at)
    WHERE action = 'mail.sent';

-- Issue 30: accounts a school can use (DATA_MODEL.md "Accounts, sessions and sign-in").
-- Passwords (Argon2id hashes only), administrators, disabled accounts; browser sessions; invitations
-- (join codes); identities from OpenID Connect and LTI; one-time reset links and the first-run set-up
-- token; the state of a sign-in in flight (OIDC and LTI); LTI platforms, their courses and used nonces.

-- password_hash: an Argon2id PHC string, NULL for an account that signs in only through its school (OIDC,
-- LTI) or only with API keys. disabled_at: set by an administrator; every session and key of the account
-- fails on its next request while it is set (checked in the SQL that finds the caller).
ALTER TABLE users
    ADD COLUMN password_hash text CHECK (password_hash IS NULL OR password_hash LIKE '$argon2id$%'),
    ADD COLUMN is_admin boolean NOT NULL DEFAULT false,
    ADD COLUMN disabled_at timestamptz,
    ADD COLUMN display_name text CHECK (display_name IS NULL OR length(display_name) <= 200),
    ADD COLUMN password_changed_at timestamptz;

-- A browser's sign-in, held in an HttpOnly cookie whose sha256 is token_hash. csrf_token is sent back by
-- the app in X-CSRF-Token on every state-changing request (not secret from its own user, useless without
-- the cookie). Live while not revoked, before expires_at (absolute) and used within the idle time
-- (SESSION_IDLE_MINUTES, checked against last_seen_at, which is bumped at most once a minute).
CREATE TABLE browser_sessions (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash    text NOT NULL UNIQUE,
    csrf_token    text NOT NULL,
    via           text NOT NULL CHECK (via IN ('password', 'signup', 'setup', 'reset', 'oidc', 'lti')),
    user_agent    text CHECK (user_agent IS NULL OR length(user_agent) <= 400),
    address       text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz
);
CREATE INDEX browser_sessions_user_idx ON browser_sessions (user_id, created_at DESC);
CREATE INDEX browser_sessions_expires_idx ON browser_sessions (expires_at);

-- A project's invitation: a short code (stored upper-case, without separators; owners see it again in
-- the list) that makes whoever signs in with it a member with `role`, until expires_at, at most max_uses
-- times. uses counts the joins; a revoked one joins nobody.
CREATE TABLE invitations (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    code        text NOT NULL UNIQUE CHECK (code ~ '^[0-9A-Z]{10,32}$'),
    role        text NOT NULL DEFAULT 'viewer' CHECK (role IN ('owner', 'editor', 'viewer')),
    created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    max_uses    integer NOT NULL CHECK (max_uses BETWEEN 1 AND 10000),
    uses        integer NOT NULL DEFAULT 0 CHECK (uses >= 0 AND uses <= max_uses),
    revoked_at  timestamptz
);
CREATE INDEX invitations_project_idx ON invitations (project_id, created_at DESC);

-- An account's identity at an outside issuer: an OpenID Connect provider (kind 'oidc': iss, sub of the ID
-- token) or an LTI platform (kind 'lti': the platform's iss and the launch's sub). Linked at the first
-- sign-in; by email only when the provider marks the email verified.
CREATE TABLE identities (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('oidc', 'lti')),
    issuer      text NOT NULL,
    subject     text NOT NULL,
    email       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, issuer, subject)
);
CREATE INDEX identities_user_idx ON identities (user_id);

-- One-time tokens, stored as sha256: a password reset link (kind 'reset', for user_id, issued by an
-- administrator or a project owner) and the first-run set-up token that creates the first administrator
-- (kind 'setup', no user). used_at is set when it is spent; a used or expired token does nothing.
CREATE TABLE one_time_tokens (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind        text NOT NULL CHECK (kind IN ('reset', 'setup')),
    token_hash  text NOT NULL UNIQUE,
    user_id     uuid REFERENCES users(id) ON DELETE CASCADE,
    created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    CHECK ((kind = 'reset') = (user_id IS NOT NULL))
);
CREATE INDEX one_time_tokens_user_idx ON one_time_tokens (user_id) WHERE user_id IS NOT NULL;

-- A sign-in in flight (OIDC authorization-code flow, LTI third-party-initiated login): the state value is
-- the key; nonce, the PKCE verifier, where to go afterwards, and which LTI platform. Single use (deleted
-- when the callback spends it), short-lived.
CREATE TABLE auth_flows (
    state          text PRIMARY KEY,
    kind           text NOT NULL CHECK (kind IN ('oidc', 'lti')),
    nonce          text NOT NULL,
    code_verifier  text,
    browser_hash   text,
    platform_id    uuid,
    next_path      text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);
CREATE INDEX auth_flows_expires_idx ON auth_flows (expires_at);

-- An LMS registered by an administrator: its issuer and our client id there, where its login and keys
-- are, and the deployment ids it may launch from (a launch from any other is refused).
CREATE TABLE lti_platforms (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    issuer          text NOT NULL,
    client_id       text NOT NULL,
    auth_login_url  text NOT NULL,
    jwks_url        text,
    jwks            jsonb CHECK (jwks IS NULL OR jsonb_typeof(jwks) = 'object'),
    deployment_ids  text[] NOT NULL CHECK (cardinality(deployment_ids) >= 1),
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (jwks_url IS NOT NULL OR jwks IS NOT NULL),
    UNIQUE (issuer, client_id)
);

-- An LMS course (the launch's context id) mapped to the project it opens.
CREATE TABLE lti_contexts (
    platform_id  uuid NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    context_id   text NOT NULL,
    project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (platform_id, context_id)
);
CREATE INDEX lti_contexts_project_idx ON lti_contexts (project_id);

-- Nonces of accepted LTI launches, kept until their token expires: a replayed launch is refused.
CREATE TABLE lti_nonces (
    platform_id  uuid NOT NULL REFERENCES lti_platforms(id) ON DELETE CASCADE,
    nonce        text NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (platform_id, nonce)
);
CREATE INDEX lti_nonces_expires_idx ON lti_nonces (expires_at);

-- The account events of this issue join the security log (migration 0011).
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
    'identity.linked', 'lti.platform_registered', 'lti.platform_removed', 'lti.launch'));
CREATE INDEX security_events_recent_idx ON security_events (id DESC);

-- studyAI initial schema. Every row that belongs to a project carries project_id.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email       text NOT NULL UNIQUE CHECK (email = lower(email) AND position('@' IN email) > 1),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Only the sha256 of a key is stored; the key itself is shown once, at creation.
CREATE TABLE api_keys (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    key_hash      text NOT NULL UNIQUE,
    key_prefix    text NOT NULL,
    name          text NOT NULL DEFAULT 'default',
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id);

CREATE TABLE projects (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description  text NOT NULL DEFAULT '',
    language     text NOT NULL DEFAULT 'auto' CHECK (language IN ('pt', 'en', 'auto')),
    created_by   uuid NOT NULL REFERENCES users(id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE project_members (
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user_idx ON project_members (user_id);

-- version: the latest submitted content; indexed_version: the version whose chunks are live.
-- status describes the latest version; a failed new version leaves indexed_version searchable.
CREATE TABLE documents (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title            text NOT NULL,
    filename         text NOT NULL,
    source_type      text NOT NULL CHECK (source_type IN ('pdf', 'markdown', 'text')),
    kind             text NOT NULL DEFAULT 'uploaded' CHECK (kind IN ('uploaded', 'generated')),
    language         text NOT NULL DEFAULT 'auto' CHECK (language IN ('pt', 'en', 'auto')),
    version          integer NOT NULL DEFAULT 1 CHECK (version >= 1),
    indexed_version  integer CHECK (indexed_version <= version),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'processing', 'ready', 'failed')),
    error            text,
    warnings         text[] NOT NULL DEFAULT '{}',
    page_count       integer,
    created_by       uuid NOT NULL REFERENCES users(id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, id)
);
CREATE INDEX documents_project_idx ON documents (project_id, created_at);

-- The bytes of every version, so a job can always re-read exactly what was uploaded.
CREATE TABLE document_versions (
    project_id    uuid NOT NULL,
    document_id   uuid NOT NULL,
    version       integer NOT NULL,
    content       bytea NOT NULL,
    content_hash  text NOT NULL,
    size_bytes    bigint NOT NULL,
    filename      text NOT NULL,
    created_by    uuid NOT NULL REFERENCES users(id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, version),
    FOREIGN KEY (project_id, document_id) REFERENCES documents (project_id, id) ON DELETE CASCADE
);

CREATE TABLE chunks (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id       uuid NOT NULL,
    document_id      uuid NOT NULL,
    document_version integer NOT NULL,
    ordinal          integer NOT NULL,
    text             text NOT NULL,
    context_header   text NOT NULL DEFAULT '',
    section_path     text[] NOT NULL DEFAULT '{}',
    page_start       integer,
    page_end         integer,
    char_start       integer NOT NULL,
    char_end         integer NOT NULL,
    content_hash     text NOT NULL,
    embedding_model  text NOT NULL,
    embedding        vector(384) NOT NULL,
    ts_config        regconfig NOT NULL DEFAULT 'simple',
    tsv              tsvector GENERATED ALWAYS AS (
                         to_tsvector(ts_config, context_header || E'\n' || text)) STORED,
    created_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (project_id, document_id) REFERENCES documents (project_id, id) ON DELETE CASCADE,
    UNIQUE (document_id, ordinal)
);
CREATE INDEX chunks_project_doc_idx ON chunks (project_id, document_id);
CREATE INDEX chunks_doc_hash_idx ON chunks (document_id, content_hash);
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
CREATE INDEX chunks_embedding_idx ON chunks USING hnsw (embedding vector_cosine_ops);

-- One row per indexing run; id = 'index:{document_id}:{version}', the arq job id too.
CREATE TABLE jobs (
    id               text PRIMARY KEY,
    project_id       uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    document_id      uuid,
    document_version integer,
    kind             text NOT NULL CHECK (kind IN ('index')),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    stage            text NOT NULL DEFAULT 'queued',
    done             integer NOT NULL DEFAULT 0,
    total            integer NOT NULL DEFAULT 0,
    chunks_total     integer,
    chunks_embedded  integer,
    attempts         integer NOT NULL DEFAULT 0,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);
CREATE INDEX jobs_project_idx ON jobs (project_id, created_at);
CREATE INDEX jobs_document_idx ON jobs (document_id);

-- The question bank (Question Generator) and students' graded attempts (Question Evaluator).

-- A question keeps its document when the document goes (ON DELETE SET NULL on document_id only):
-- attempts stay in students' history, and grading falls back to the reference answer alone.
-- source_chunk_ids are the chunks the question was generated from (a reindex replaces chunk ids,
-- so readers join them against chunks rather than trusting they still exist). embedding is the
-- question text's query embedding, used only for near-duplicate checks within the project.
CREATE TABLE questions (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id        uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    document_id       uuid,
    section_path      text[] NOT NULL DEFAULT '{}',
    type              text NOT NULL CHECK (type IN ('multiple_choice', 'short_answer', 'application')),
    question          text NOT NULL CHECK (length(question) > 0),
    answer            text NOT NULL CHECK (length(answer) > 0),
    distractors       jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(distractors) = 'array'),
    explanation       text NOT NULL DEFAULT '',
    difficulty        text NOT NULL CHECK (difficulty IN ('easy', 'medium', 'hard')),
    confidence        real NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    model_confidence  real CHECK (model_confidence BETWEEN 0 AND 1),
    support           real CHECK (support BETWEEN 0 AND 1),
    status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'review', 'archived')),
    source_chunk_ids  bigint[] NOT NULL CHECK (cardinality(source_chunk_ids) > 0),
    embedding         vector(384) NOT NULL,
    created_by        uuid REFERENCES users(id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (project_id, document_id) REFERENCES documents (project_id, id) ON DELETE SET NULL (document_id),
    CHECK (type <> 'multiple_choice' OR jsonb_array_length(distractors) = 3),
    UNIQUE (project_id, id)
);
CREATE INDEX questions_project_idx ON questions (project_id, status, created_at);
CREATE INDEX questions_document_idx ON questions (project_id, document_id);
-- No vector index on purpose: the near-duplicate check is an exact scan of one project's bank
-- (hundreds of questions), which an approximate index filtered by project could starve.

CREATE TABLE question_attempts (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id      uuid NOT NULL,
    question_id     uuid NOT NULL,
    user_id         uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    answer          text NOT NULL,
    score           real NOT NULL CHECK (score BETWEEN 0 AND 1),
    verdict         text NOT NULL CHECK (verdict IN ('correct', 'partially_correct', 'incorrect')),
    feedback        text NOT NULL DEFAULT '',
    missing_points  jsonb NOT NULL DEFAULT '[]'::jsonb,
    citations       jsonb NOT NULL DEFAULT '[]'::jsonb,
    graded_by       text NOT NULL CHECK (graded_by IN ('model', 'choice')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (project_id, question_id) REFERENCES questions (project_id, id) ON DELETE CASCADE
);
CREATE INDEX question_attempts_user_idx ON question_attempts (project_id, question_id, user_id, created_at);

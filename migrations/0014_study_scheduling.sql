-- Issue 12 §2-3: spaced repetition (FSRS) per student per item, review logs, per-student study settings
-- and FSRS parameters, and the project's exam date (DATA_MODEL.md "Study scheduling").

-- The project's exam date (owners set it); a student's own study_settings.exam_date overrides it.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS exam_date date;

-- A card: one student's FSRS memory state for one item (fsrs 6.x Card fields, plus reps and lapses).
-- No row = a new item for that student; the row is written by the first review. `state` is fsrs's
-- State (1 learning, 2 review, 3 relearning); `due` is computed in Python (fsrs), never by SQL's clock.
CREATE TABLE study_cards (
    project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    question_id  uuid NOT NULL,
    state        smallint NOT NULL CHECK (state IN (1, 2, 3)),
    step         integer CHECK (step >= 0),
    stability    double precision CHECK (stability > 0),
    difficulty   double precision CHECK (difficulty BETWEEN 1 AND 10),
    due          timestamptz NOT NULL,
    last_review  timestamptz NOT NULL,
    reps         integer NOT NULL DEFAULT 0 CHECK (reps >= 0),
    lapses       integer NOT NULL DEFAULT 0 CHECK (lapses >= 0),
    created_at   timestamptz NOT NULL,  -- the first review (the day's new-item budget counts these)
    PRIMARY KEY (project_id, user_id, question_id),
    FOREIGN KEY (project_id, question_id) REFERENCES questions (project_id, id) ON DELETE CASCADE
);
CREATE INDEX study_cards_due_idx ON study_cards (project_id, user_id, due);
CREATE INDEX study_cards_question_idx ON study_cards (project_id, question_id);

-- One review of one card: the rating (1 Again .. 4 Hard/Good/Easy), when, and whether it came from the
-- study queue ('review') or a graded attempt ('attempt'). The input of fsrs's Optimizer.
CREATE TABLE study_reviews (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    question_id  uuid NOT NULL,
    rating       smallint NOT NULL CHECK (rating BETWEEN 1 AND 4),
    source       text NOT NULL CHECK (source IN ('review', 'attempt')),
    state_before smallint CHECK (state_before IN (1, 2, 3)),  -- NULL: the item was new
    reviewed_at  timestamptz NOT NULL,
    duration_ms  integer CHECK (duration_ms >= 0),
    FOREIGN KEY (project_id, question_id) REFERENCES questions (project_id, id) ON DELETE CASCADE
);
CREATE INDEX study_reviews_user_idx ON study_reviews (project_id, user_id, reviewed_at);
CREATE INDEX study_reviews_question_idx ON study_reviews (project_id, question_id);

-- A student's own study settings in one project, and the FSRS parameters fitted to their own reviews
-- (NULL: fsrs's defaults) with the review count they were fitted on.
CREATE TABLE study_settings (
    project_id          uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id             uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    exam_date           date,
    new_per_day         integer NOT NULL DEFAULT 20 CHECK (new_per_day BETWEEN 0 AND 1000),
    desired_retention   double precision NOT NULL DEFAULT 0.9 CHECK (desired_retention BETWEEN 0.7 AND 0.99),
    parameters          double precision[] CHECK (parameters IS NULL OR cardinality(parameters) = 21),
    optimized_reviews   integer,
    optimized_at        timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, user_id)
);

-- Migration 0012's forget rule, unchanged, plus the member's cards, review logs and study settings.
CREATE OR REPLACE FUNCTION forget_member(p_project uuid, p_user uuid) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM qa_threads WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM question_attempts WHERE project_id = p_project AND user_id = p_user;
    UPDATE rag_evaluations e SET user_id = NULL, question = '', answer = '', claims = '[]'::jsonb
        WHERE e.project_id = p_project
          AND (e.user_id = p_user
               OR e.query_id IN (SELECT h.id FROM query_history h
                                 WHERE h.project_id = p_project AND h.user_id = p_user));
    UPDATE query_history SET user_id = NULL, question = '', answer = NULL
        WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM study_cards WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM study_reviews WHERE project_id = p_project AND user_id = p_user;
    DELETE FROM study_settings WHERE project_id = p_project AND user_id = p_user;
END;
$$;

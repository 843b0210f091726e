-- Issue 29: every common course format is a document type of its own (core/text/filetypes.py).
ALTER TABLE documents DROP CONSTRAINT documents_source_type_check;
ALTER TABLE documents ADD CONSTRAINT documents_source_type_check CHECK (source_type IN (
    'pdf', 'markdown', 'text', 'html', 'docx', 'pptx', 'xlsx', 'epub', 'image'
));

-- A course uploaded at once (a folder or a ZIP): one batch, its documents, and the files refused with
-- their reasons (DATA_MODEL.md "Upload batches").
CREATE TABLE upload_batches (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    created_by  uuid NOT NULL REFERENCES users(id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    rejected    jsonb NOT NULL DEFAULT '[]',  -- [{path, reason}]: files inside that were not taken
    UNIQUE (project_id, id)
);
ALTER TABLE documents ADD COLUMN batch_id uuid;
ALTER TABLE documents ADD CONSTRAINT documents_batch_fk FOREIGN KEY (project_id, batch_id)
    REFERENCES upload_batches (project_id, id) ON DELETE SET NULL (batch_id);
CREATE INDEX documents_batch_idx ON documents (batch_id) WHERE batch_id IS NOT NULL;

-- Upload budgets count bytes stored in the last hour, per user and per project (core/store/content/upload_budget.py).
CREATE INDEX document_versions_user_recent_idx ON document_versions (created_by, created_at);
CREATE INDEX document_versions_project_recent_idx ON document_versions (project_id, created_at);

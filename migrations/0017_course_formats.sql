-- Issue 29: every common course format is a document type of its own (core/text/filetypes.py).
ALTER TABLE documents DROP CONSTRAINT documents_source_type_check;
ALTER TABLE documents ADD CONSTRAINT documents_source_type_check CHECK (source_type IN (
    'pdf', 'markdown', 'text', 'html', 'docx', 'pptx', 'xlsx', 'epub', 'image'
));

-- Issue 42, a cited passage highlighted on a scanned page or page image: the words the viewer's first
-- request read off one page of one stored version (OCR takes seconds; a version's bytes never change), kept
-- so the next reader of that page gets them at once (DATA_MODEL.md "Cited spots").
CREATE TABLE IF NOT EXISTS page_words (
    project_id   uuid NOT NULL,
    document_id  uuid NOT NULL,
    version      integer NOT NULL,
    page         integer NOT NULL CHECK (page >= 1),
    source       text NOT NULL CHECK (source IN ('text', 'ocr')),
    words        jsonb NOT NULL,  -- [{x0, y0, x1, y1, text, line}], boxes as fractions of the page shown
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (document_id, version, page),
    FOREIGN KEY (document_id, version) REFERENCES document_versions (document_id, version) ON DELETE CASCADE,
    FOREIGN KEY (project_id, document_id) REFERENCES documents (project_id, id) ON DELETE CASCADE
);

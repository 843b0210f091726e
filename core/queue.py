"""Names shared by the API (which enqueues jobs by name) and the worker (which runs them)."""

QUEUE_NAME = "studyai:queue"
INDEX_DOCUMENT = "index_document"

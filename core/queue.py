"""Names shared by the API (which enqueues jobs by name) and the worker (which runs them)."""

QUEUE_NAME = "studyai:queue"
INDEX_DOCUMENT = "index_document"
WRITE_NOTE = "write_note"  # a Content Writer note, by jobs id
JUDGE_ANSWER = "judge_answer"  # a sampled QA answer's groundedness, by query_history id
PURGE_QUERY_HISTORY = "purge_query_history"  # hourly and at worker start-up: the retention window

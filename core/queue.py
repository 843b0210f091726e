"""Names shared by the API (which enqueues jobs by name) and the workers (which run them).

Two queues, each served by its own worker processes: indexing never waits behind a model-bound job."""

INDEX_QUEUE = "studyai:queue"  # uploads, edits, reindexing (the name predates the split: queued jobs survive)
AGENT_QUEUE = "studyai:agents"  # notes and groundedness judging: model-bound, minutes long
QUEUE_NAME = INDEX_QUEUE  # kept for existing imports; new code names the queue it means
INDEX_DOCUMENT = "index_document"
WRITE_NOTE = "write_note"  # a Content Writer note, by jobs id
JUDGE_ANSWER = "judge_answer"  # a sampled QA answer's groundedness, by query_history id
OPTIMIZE_STUDY = "optimize_study_parameters"  # a student's FSRS parameters from their reviews (index queue)
PURGE_QUERY_HISTORY = "purge_query_history"  # hourly and at worker start-up: the retention window

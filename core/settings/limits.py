"""Bounds on what a request or a document may cost, per-user budgets, and how long records are kept."""

from pydantic import Field

from core.settings.group import SettingsGroup


class LimitSettings(SettingsGroup):
    # A request body over its route's cap answers 413 before routing, parsing or authentication
    # (backend/middleware/body_limit.py). Uploads get max_upload_bytes (the multipart or JSON around the file
    # a little more); every other body max_json_body_bytes.
    max_upload_bytes: int = Field(default=50 * 1024 * 1024, validation_alias="MAX_UPLOAD_BYTES")
    max_json_body_bytes: int = Field(default=1024 * 1024, ge=1024, validation_alias="MAX_JSON_BODY_BYTES")
    # Parsing's own bounds (PDF_MAX_PAGES, PARSE_*, OCR_*): core/settings/parsing.py.
    # The embedded Postgres's disk: an upload or a document's chunks that would leave less than this free
    # are refused (507 / the job `failed`), keeping room for its WAL and small writes (core/runtime/disk.py).
    storage_min_free_mb: int = Field(default=64, ge=0, validation_alias="STORAGE_MIN_FREE_MB")
    # Upload budgets (backend/documents/upload_budget.py): bytes stored in the last hour per user and per
    # project, a project's stored bytes (every version), and its index jobs waiting. A teacher putting a
    # whole course in (500 files / 1 GB in an hour) stays within them; filling the disk does not.
    upload_bytes_per_hour_user: int = Field(
        default=2 * 1024**3, ge=0, validation_alias="UPLOAD_BYTES_PER_HOUR_USER"
    )
    upload_bytes_per_hour_project: int = Field(
        default=4 * 1024**3, ge=0, validation_alias="UPLOAD_BYTES_PER_HOUR_PROJECT"
    )
    project_max_bytes: int = Field(default=20 * 1024**3, ge=0, validation_alias="PROJECT_MAX_BYTES")
    project_max_pending_jobs: int = Field(default=2000, ge=1, validation_alias="PROJECT_MAX_PENDING_JOBS")
    # A course uploaded at once (POST /projects/{id}/documents/batch: a folder's files or a ZIP): the
    # request's cap, its files (ZIP members included), and what a ZIP may inflate to. Each file inside is
    # still held to MAX_UPLOAD_BYTES.
    course_upload_max_bytes: int = Field(
        default=500 * 1024**2, ge=1, validation_alias="COURSE_UPLOAD_MAX_BYTES"
    )
    course_upload_max_files: int = Field(default=2000, ge=1, validation_alias="COURSE_UPLOAD_MAX_FILES")
    course_zip_max_inflated_bytes: int = Field(
        default=2 * 1024**3, ge=1, validation_alias="COURSE_ZIP_MAX_INFLATED_BYTES"
    )
    # Live (unrevoked, unexpired) API keys per user.
    api_keys_max_per_user: int = Field(default=20, ge=1, validation_alias="API_KEYS_MAX_PER_USER")


class RateLimitSettings(SettingsGroup):
    """Budgets in `limits` notation ("20/minute", "1000/day", "10 per second"), shared by every API
    process through Redis (backend/middleware/rate_limits.py); server settings only, no API changes them."""

    enabled: bool = Field(default=True, validation_alias="RATE_LIMIT_ENABLED")
    # Per user (all of a user's keys share one budget): agent routes (model time), uploads (POST/PATCH
    # documents, reindex), the rest.
    agent: str = Field(default="20/minute", validation_alias="RATE_LIMIT_AGENT")
    # Upload requests: a flood guard only; what uploads may cost is budgeted in bytes and queued jobs
    # (LimitSettings above). A course folder or ZIP is one request.
    upload: str = Field(default="2000/hour", validation_alias="RATE_LIMIT_UPLOAD")
    read: str = Field(default="300/minute", validation_alias="RATE_LIMIT_READ")
    # Per client address, before authentication (every route but /health*). A class behind one NAT
    # shares it: raise it there. Failed authentications (401) per address have their own, smaller one.
    per_address: str = Field(default="600/minute", validation_alias="RATE_LIMIT_PER_ADDRESS")
    auth_failures: str = Field(default="30/minute", validation_alias="RATE_LIMIT_AUTH_FAILURES")


class RetentionSettings(SettingsGroup):
    """Days each kind of record is kept, purged by the worker's hourly cron (core/store/accounts/privacy.py,
    DATA_MODEL.md "Students' privacy"); 0 days writes nothing."""

    # 0 writes no history row (and so no answer is sampled for judging).
    query_history_days: int = Field(default=30, ge=0, validation_alias="QUERY_HISTORY_RETENTION_DAYS")
    # 0: QA answers without keeping a thread (thread_id null), an attempt is graded and returned but not
    # stored (so the project's attempt limit cannot count it), no answer is sampled for a groundedness
    # evaluation. A thread's age counts from its last turn.
    qa_thread_days: int = Field(default=365, ge=0, validation_alias="QA_THREAD_RETENTION_DAYS")
    attempt_days: int = Field(default=365, ge=0, validation_alias="ATTEMPT_RETENTION_DAYS")
    evaluation_days: int = Field(default=90, ge=0, validation_alias="EVALUATION_RETENTION_DAYS")
    security_events_days: int = Field(default=365, ge=1, validation_alias="SECURITY_EVENTS_RETENTION_DAYS")

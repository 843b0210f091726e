"""Settings in typed groups, each value read from its own environment variable (README, "Configuration")."""

from core.settings.agents import GroundednessSettings, QaSettings, TracingSettings
from core.settings.group import SettingsGroup
from core.settings.limits import LimitSettings, RateLimitSettings, RetentionSettings
from core.settings.models import DEFAULT_EMBEDDING_MODELS, EmbeddingSettings, LlmSettings
from core.settings.operations import BackupSettings
from core.settings.retrieval import ChunkingSettings, RetrievalSettings
from core.settings.root import Settings
from core.settings.services import ApiSettings, ServiceSettings
from core.settings.study import EXAM_DAILY_REVIEW_MAX, EXAM_TERM_RETENTION, StudySettings
from core.settings.workers import WorkerSettings

__all__ = [
    "DEFAULT_EMBEDDING_MODELS",
    "EXAM_DAILY_REVIEW_MAX",
    "EXAM_TERM_RETENTION",
    "ApiSettings",
    "BackupSettings",
    "ChunkingSettings",
    "EmbeddingSettings",
    "GroundednessSettings",
    "LimitSettings",
    "LlmSettings",
    "QaSettings",
    "RateLimitSettings",
    "RetentionSettings",
    "RetrievalSettings",
    "ServiceSettings",
    "Settings",
    "SettingsGroup",
    "StudySettings",
    "TracingSettings",
    "WorkerSettings",
]

"""The one settings object: read from the environment (or .env) at start-up, then passed in.

Values sit in typed groups (`settings.llm.base_url`, `settings.retrieval.reranker`), while every value
keeps its flat environment variable (`LLM_BASE_URL`, `RERANKER`): each group field names its variable
in its `validation_alias`, and the sources below place a variable's value in its group."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import Field
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from core.settings.accounts import AccountSettings, OidcSettings, SmtpSettings
from core.settings.agents import GroundednessSettings, QaSettings, TracingSettings
from core.settings.group import SettingsGroup
from core.settings.limits import LimitSettings, RateLimitSettings, RetentionSettings
from core.settings.models import EmbeddingSettings, LlmSettings
from core.settings.operations import BackupSettings
from core.settings.parsing import ParseSettings
from core.settings.retrieval import ChunkingSettings, RetrievalSettings
from core.settings.services import ApiSettings, ServiceSettings
from core.settings.study import StudySettings
from core.settings.workers import WorkerSettings


class Settings(BaseSettings):
    """Read from the environment and `.env` (the environment wins). Built in code, values are named as in
    the environment, in any case, and override both: `Settings(_env_file=None, LLM_BASE_URL=None)`;
    `settings.with_values({"RATE_LIMIT_ENABLED": False})` is a copy with one variable changed. An
    unknown name given in code is an error (in the environment it is ignored)."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    services: ServiceSettings = Field(default_factory=ServiceSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    parsing: ParseSettings = Field(default_factory=ParseSettings)
    rate_limits: RateLimitSettings = Field(default_factory=RateLimitSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    qa: QaSettings = Field(default_factory=QaSettings)
    groundedness: GroundednessSettings = Field(default_factory=GroundednessSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    study: StudySettings = Field(default_factory=StudySettings)
    accounts: AccountSettings = Field(default_factory=AccountSettings)
    oidc: OidcSettings = Field(default_factory=OidcSettings)
    smtp: SmtpSettings = Field(default_factory=SmtpSettings)
    backup: BackupSettings = Field(default_factory=BackupSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        assert isinstance(init_settings, InitSettingsSource)
        assert isinstance(env_settings, EnvSettingsSource)
        assert isinstance(dotenv_settings, DotEnvSettingsSource)
        return (
            GroupedVariables(settings_cls, init_settings.init_kwargs, given_in_code=True),
            GroupedVariables(settings_cls, env_settings.env_vars),
            GroupedVariables(settings_cls, dotenv_settings.env_vars),
        )

    @classmethod
    def env_fields(cls) -> dict[str, tuple[str, str]]:
        """(group, field) by environment variable name, for every variable the settings read."""
        return {
            env: (group, field)
            for group, info in cls.model_fields.items()
            for env, field in _group_class(info).env_names().items()
        }

    def with_values(self, values: Mapping[str, object]) -> Self:
        """A copy with `values` (named as in the environment, any case) replaced; every group changed is
        validated again."""
        changes = _by_group(type(self).env_fields(), values, given_in_code=True)
        update: dict[str, SettingsGroup] = {}
        for group, fields in changes.items():
            current: SettingsGroup = getattr(self, group)
            update[group] = type(current).model_validate({**current.model_dump(), **fields})
        return self.model_copy(update=update)

    @property
    def pgdata_dir(self) -> Path:
        return self.services.data_dir / "pgdata"

    @property
    def models_dir(self) -> Path:
        return self.llm.models_dir or self.services.data_dir / "models"

    @property
    def redis_db_path(self) -> Path:
        return self.services.data_dir / "redis" / "studyai.rdb"


class GroupedVariables(PydanticBaseSettingsSource):
    """Values named by environment variable, placed in their groups (`LLM_BASE_URL` -> llm.base_url).
    Given in code, a group's own name takes a whole group (a model or a dict of its fields)."""

    def __init__(
        self, settings_cls: type[BaseSettings], values: Mapping[str, Any], *, given_in_code: bool = False
    ) -> None:
        super().__init__(settings_cls)
        self._values = values
        self._given_in_code = given_in_code

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every value at once

    def __call__(self) -> dict[str, Any]:
        groups = self.settings_cls.model_fields
        whole = {name: value for name, value in self._values.items() if name in groups}
        named = {name: value for name, value in self._values.items() if name not in groups}
        assert issubclass(self.settings_cls, Settings)
        nested = _by_group(self.settings_cls.env_fields(), named, given_in_code=self._given_in_code)
        for group, value in whole.items():
            merged = isinstance(value, dict) and group in nested  # its variables named one by one win
            nested[group] = {**value, **nested[group]} if merged else value
        return nested


def _group_class(info: FieldInfo) -> type[SettingsGroup]:
    group = info.annotation
    assert isinstance(group, type) and issubclass(group, SettingsGroup)
    return group


def _by_group(
    env_fields: Mapping[str, tuple[str, str]], values: Mapping[str, object], *, given_in_code: bool
) -> dict[str, Any]:
    """{group: {field: value}} for `values` named by environment variable, in any case; a name that is
    no setting is an error when given in code and ignored in the environment (it holds everything)."""
    places = {env.lower(): place for env, place in env_fields.items()}
    nested: dict[str, dict[str, object]] = {}
    for name, value in values.items():
        place = places.get(name.lower())
        if place is None:
            if given_in_code:
                raise ValueError(f"{name} is not a setting (settings are named as environment variables)")
            continue
        group, field = place
        nested.setdefault(group, {})[field] = value
    return nested

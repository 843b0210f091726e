"""Pydantic models of invitations: an owner's invitation (its code and link), the public preview, joining
with a code signed in or with a new account."""

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from backend.schemas.auth import EmailField, SessionOut
from backend.schemas.projects import Role

# A typed code: 10 characters with a dash or spaces; anything longer cannot be one (codes.normalize).
CodeField = Field(min_length=1, max_length=64)


class InvitationCreate(BaseModel):
    """A new invitation: whoever joins with its code becomes a member with `role`."""

    model_config = ConfigDict(extra="forbid")

    role: Role = "viewer"
    expires_in_hours: int | None = Field(
        default=None, ge=1, le=8760, description="unset: INVITATION_DEFAULT_HOURS (a week unless configured)"
    )
    max_uses: int = Field(default=100, ge=1, le=10000)


class InvitationOut(BaseModel):
    id: UUID
    code: str = Field(description="XXXXX-XXXXX; read case-insensitively, with or without the dash")
    link: str = Field(description="the app's join page with the code: send it, or show the code")
    role: Role
    expires_at: datetime
    max_uses: int
    uses: int
    revoked_at: datetime | None
    created_at: datetime


class InvitationPreview(BaseModel):
    """What a code leads to, before joining (public)."""

    project_name: str
    role: Role
    expires_at: datetime


class Join(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = CodeField


class JoinSignup(BaseModel):
    """A new account that joins at once: the code is the permission to create it."""

    model_config = ConfigDict(extra="forbid")

    code: str = CodeField
    email: str = EmailField
    password: str = Field(min_length=1, max_length=1024)
    display_name: str | None = Field(default=None, min_length=1, max_length=200)


class Joined(BaseModel):
    project_id: UUID
    role: Role = Field(description="the caller's role now: joining never lowers a role they had")
    project_name: str


class JoinedWithAccount(Joined):
    session: SessionOut

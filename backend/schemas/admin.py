"""Pydantic models of server administration: the first administrator, accounts, reset links, mailed
invitations."""

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from backend.schemas.auth import EmailField
from backend.schemas.records import record_fields
from core.store.accounts import Account

TokenField = Field(min_length=16, max_length=200)


class SetupIn(BaseModel):
    """The first administrator, created with the set-up token `studyai up` printed."""

    model_config = ConfigDict(extra="forbid")

    token: str = TokenField
    email: str = EmailField
    password: str = Field(min_length=1, max_length=1024)
    display_name: str | None = Field(default=None, max_length=200)


class ResetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str = TokenField
    password: str = Field(min_length=1, max_length=1024)


class ResetValid(BaseModel):
    valid: bool


class AccountOut(record_fields(Account)):
    disabled_at: datetime | None = Field(description="set: the account's sessions and keys fail")


class ResetLinkOut(BaseModel):
    link: str = Field(description="one use, until expires_at; sign-in with it ends the account's sessions")
    expires_at: datetime
    mailed: bool = Field(description="sent to the account's email (SMTP configured and the server took it)")


class InvitationEmail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    emails: list[Annotated[str, EmailField]] = Field(min_length=1, max_length=100)


class MailSent(BaseModel):
    sent: int

"""Pydantic models of self-service accounts: sign-up, the account's own profile, password and sessions."""

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from backend.schemas.auth import EmailField
from backend.schemas.records import record_fields
from core.store.accounts import Account
from core.store.sessions import BrowserSession

# check_password (core/accounts/passwords.py) gives the reason for a weak one; this only bounds the body.
PasswordField = Field(min_length=1, max_length=1024)


def _not_blank(value: str) -> str:
    """Surrounding spaces dropped; a name that is only spaces is refused (null clears the name)."""
    stripped = value.strip()
    if not stripped:
        raise ValueError("display_name must not be blank; send null to clear it")
    return stripped


DisplayName = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_not_blank)]


class Signup(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: str = EmailField
    password: str = PasswordField
    display_name: DisplayName | None = None


class ProfileChange(BaseModel):
    """PATCH /me: the name others see in member lists; null clears it (the email is shown instead)."""

    model_config = ConfigDict(extra="forbid")

    display_name: DisplayName | None


class PasswordChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    current_password: str | None = Field(
        default=None, max_length=1024, description="required when the account has a password"
    )
    new_password: str = PasswordField


class MeOut(record_fields(Account, exclude={"disabled_at"})):
    """The caller's account: never its password hash, only whether it has one."""


class SessionRow(record_fields(BrowserSession, exclude={"user_id", "revoked_at"})):
    """One of the caller's live browser sessions: never its cookie or the cookie's hash."""

    current: bool = Field(description="the session this request came with")

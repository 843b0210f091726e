"""Pydantic models of sign-in: the server's sign-in options, credentials, the signed-in session."""

from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

EmailField = Field(min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")


class AuthConfig(BaseModel):
    """What the sign-in screen offers (public: no account needed)."""

    signup_enabled: bool
    password_min_length: int
    oidc_enabled: bool
    oidc_name: str | None
    setup_required: bool  # no administrator yet: the first-run screen asks for `studyai up`'s token


class Login(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: str = EmailField
    password: str = Field(min_length=1, max_length=1024)


class SessionUser(BaseModel):
    id: UUID
    email: str
    display_name: str | None = None
    is_admin: bool


class SessionOut(BaseModel):
    """The signed-in account and the CSRF token the app sends back in X-CSRF-Token on every write."""

    user: SessionUser
    csrf_token: str
    session_id: UUID | None  # None when the caller came with an API key

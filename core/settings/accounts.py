"""How people sign in: passwords, browser sessions, invitations, the school's OpenID Connect provider,
and optional mail (SMTP) for invitations and reset links."""

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from core.settings.group import SettingsGroup


class AccountSettings(SettingsGroup):
    # Off: people arrive through an invitation (its code lets them create an account), OIDC or LTI.
    signup_enabled: bool = Field(default=False, validation_alias="SIGNUP_ENABLED")
    password_min_length: int = Field(default=10, ge=8, le=128, validation_alias="PASSWORD_MIN_LENGTH")
    # Who may create projects: everyone, or only teachers and administrators (an administrator marks
    # teachers; an LMS instructor's launch makes one).
    project_creators: Literal["everyone", "teachers"] = Field(
        default="everyone", validation_alias="PROJECT_CREATORS"
    )
    # Wrong passwords per account and address: past it that account's sign-in from that address answers
    # 429 until the window frees a slot (the owner elsewhere, and the rest of a class, are not affected).
    login_failures: str = Field(default="10/15minutes", validation_alias="RATE_LIMIT_LOGIN_FAILURES")
    # Wrong invitation codes per address (and per signed-in account): guessing a 50-bit code is cut off,
    # while a class behind one address, a few mistyping, all get in (right codes spend nothing).
    join_failures: str = Field(default="20/10minutes", validation_alias="RATE_LIMIT_JOIN_FAILURES")
    # A browser session ends after this many minutes unused, and after SESSION_MAX_DAYS whatever happens.
    session_idle_minutes: int = Field(default=720, ge=1, validation_alias="SESSION_IDLE_MINUTES")
    session_max_days: int = Field(default=30, ge=1, le=365, validation_alias="SESSION_MAX_DAYS")
    # auto: the session cookie is Secure when the request came over TLS (scheme https, as uvicorn sees it
    # behind a trusted proxy); true/false force it.
    session_cookie_secure: Literal["auto", "true", "false"] = Field(
        default="auto", validation_alias="SESSION_COOKIE_SECURE"
    )
    # The address people reach the app at (https://study.school.example): join and reset links, the OIDC
    # redirect and the LTI tool URLs are built from it, and an Origin header must match it. Unset: the
    # address of the request itself.
    public_url: str | None = Field(default=None, validation_alias="PUBLIC_URL")
    # The LTI tool's private key (PEM) from a file, e.g. a mounted Kubernetes Secret. Unset: the deployment's
    # key in Postgres, generated once and shared by every replica (backend/accounts/lti/keys.py).
    lti_tool_key_file: Path | None = Field(default=None, validation_alias="LTI_TOOL_KEY_FILE")
    invitation_default_hours: int = Field(
        default=168, ge=1, le=8760, validation_alias="INVITATION_DEFAULT_HOURS"
    )
    reset_link_hours: int = Field(default=24, ge=1, le=720, validation_alias="RESET_LINK_HOURS")
    # Messages one account may have the server send per 24 hours (invitations, reset links it asked for).
    mail_per_user_day: int = Field(default=200, ge=0, le=100_000, validation_alias="MAIL_PER_USER_DAY")
    # A first password on an account that signs in only through its school needs a school sign-in this
    # recent (or a reset link).
    fresh_sign_in_minutes: int = Field(default=10, ge=1, le=1440, validation_alias="FRESH_SIGN_IN_MINUTES")

    @property
    def public_https(self) -> bool:
        """PUBLIC_URL is https: the session cookie is __Host- and Secure, and answers carry HSTS."""
        return bool(self.public_url and self.public_url.lower().startswith("https://"))

    @field_validator("public_url")
    @classmethod
    def _no_trailing_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else None


class OidcSettings(SettingsGroup):
    """The school's OpenID Connect provider (Google Workspace, Microsoft Entra, Keycloak...). Off while
    OIDC_ISSUER is unset."""

    issuer: str | None = Field(default=None, validation_alias="OIDC_ISSUER")
    client_id: str | None = Field(default=None, validation_alias="OIDC_CLIENT_ID")
    client_secret: str | None = Field(default=None, validation_alias="OIDC_CLIENT_SECRET")
    # The button's label: "Sign in with <name>".
    name: str = Field(default="your school", validation_alias="OIDC_NAME")
    # Comma-separated email domains allowed to sign in (empty: any the provider vouches for).
    allowed_domains: str = Field(default="", validation_alias="OIDC_ALLOWED_DOMAINS")
    scopes: str = Field(default="openid email profile", validation_alias="OIDC_SCOPES")

    @field_validator("issuer")
    @classmethod
    def _https_issuer(cls, value: str | None) -> str | None:
        """The provider's keys and tokens come from the issuer's address: https, or plain http only on
        this machine's loopback (a provider beside the app, the tests)."""
        if value is None:
            return None
        parts = urlsplit(value)
        loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "::1", "localhost")
        if not (parts.scheme == "https" and parts.hostname) and not loopback:
            raise ValueError("OIDC_ISSUER must be an https URL (plain http only on this machine's loopback)")
        return value

    @property
    def enabled(self) -> bool:
        return bool(self.issuer and self.client_id)

    @property
    def domains(self) -> frozenset[str]:
        return frozenset(d.strip().lower().lstrip("@") for d in self.allowed_domains.split(",") if d.strip())


class SmtpSettings(SettingsGroup):
    """Mail for invitations and reset links; off while SMTP_HOST is unset (links are shown to copy)."""

    host: str | None = Field(default=None, validation_alias="SMTP_HOST")
    port: int = Field(default=587, ge=1, le=65535, validation_alias="SMTP_PORT")
    username: str | None = Field(default=None, validation_alias="SMTP_USERNAME")
    password: str | None = Field(default=None, validation_alias="SMTP_PASSWORD")
    sender: str = Field(default="studyai@localhost", validation_alias="SMTP_FROM")
    # starttls (port 587), tls (implicit, port 465) or none (a relay on the same host, or the tests).
    security: Literal["starttls", "tls", "none"] = Field(default="starttls", validation_alias="SMTP_SECURITY")

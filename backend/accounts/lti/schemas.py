"""Pydantic models of LTI 1.3: a platform as an administrator registers it, and the tool's URLs an LMS
is configured with."""

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.accounts.lti.keys import key_set_url_allowed
from backend.web.records import record_fields
from core.store.accounts.lti import Platform

URL_PATTERN = r"^https?://[^\s]+$"


class PlatformIn(BaseModel):
    """An LMS: its issuer, our client id there, its authorization endpoint, its keys (jwks_url, or a
    key set pasted in) and the deployment ids it may launch from."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    issuer: str = Field(min_length=1, max_length=2000)
    client_id: str = Field(min_length=1, max_length=500)
    auth_login_url: str = Field(min_length=8, max_length=2000, pattern=URL_PATTERN)
    jwks_url: str | None = Field(default=None, min_length=8, max_length=2000, pattern=URL_PATTERN)
    jwks: dict[str, Any] | None = None
    deployment_ids: list[str] = Field(min_length=1, max_length=100)

    @model_validator(mode="after")
    def _keys_given(self) -> "PlatformIn":
        if (self.jwks_url is None) == (self.jwks is None):
            raise ValueError("give the platform's keys: either jwks_url or jwks")
        if self.jwks_url is not None and not key_set_url_allowed(self.jwks_url):
            raise ValueError("jwks_url must be https (plain http only to this machine's loopback)")
        if self.jwks is not None and not isinstance(self.jwks.get("keys"), list):
            raise ValueError("jwks must be a JWK set: an object with a `keys` list")
        if any(not deployment.strip() or len(deployment) > 500 for deployment in self.deployment_ids):
            raise ValueError("deployment ids must be non-empty (at most 500 characters)")
        return self


class PlatformOut(record_fields(Platform)):
    """A registered LMS, as stored."""


class ToolConfig(BaseModel):
    """What to paste into the LMS's tool registration (Moodle: "External tool", Canvas: "LTI key")."""

    title: str
    login_initiation_url: str  # OpenID Connect login initiation / "Initiate login URL"
    redirect_uris: list[str]  # where the platform posts the ID token
    target_link_uri: str  # the tool's launch URL
    jwks_url: str  # the tool's public keys ("Public keyset URL")
    domain: str

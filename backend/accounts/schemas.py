"""The accounts domain's models at the API edge: sign-in, the account itself, administration and
invitations. `Email` normalises an address once, where it enters; response models derive from the
store's records wherever a field is the same (backend/web/records.py)."""

from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal, Self
from uuid import UUID

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    model_validator,
)

from backend.web.records import record_fields
from core.accounts.emails import normalize_email
from core.accounts.roles import Role
from core.store.accounts.accounts import Account
from core.store.accounts.api_keys import ApiKey
from core.store.accounts.member_invitations import PersonalInvitation
from core.store.accounts.security_events import SecurityEvent
from core.store.accounts.sessions import BrowserSession

EmailField = Field(min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")
Email = Annotated[str, EmailField, AfterValidator(normalize_email)]
# check_password (core/accounts/passwords.py) gives the reason for a weak one; this only bounds the body.
PasswordField = Field(min_length=1, max_length=1024)
TokenField = Field(min_length=16, max_length=200)
# A typed code: 10 characters with a dash or spaces; anything longer cannot be one (codes.normalize).
CodeField = Field(min_length=1, max_length=64)
MAX_KEY_LIFETIME_DAYS = 3650


def _not_blank(value: str) -> str:
    """Surrounding spaces dropped; a name that is only spaces is refused (null clears the name)."""
    stripped = value.strip()
    if not stripped:
        raise ValueError("display_name must not be blank; send null to clear it")
    return stripped


DisplayName = Annotated[str, StringConstraints(min_length=1, max_length=200), AfterValidator(_not_blank)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Sign-in


class AuthConfig(BaseModel):
    """What the sign-in screen offers (public: no account needed)."""

    signup_enabled: bool
    password_min_length: int
    oidc_enabled: bool
    oidc_name: str | None
    setup_required: bool  # no administrator yet: the first-run screen asks for `studyai up`'s token
    mail_enabled: bool = Field(description="mail is set up: 'forgot your password' is offered")
    project_creators: Literal["everyone", "teachers"]


class Login(Strict):
    email: Email
    password: str = PasswordField


class SessionUser(BaseModel):
    id: UUID
    email: str
    display_name: str | None = None
    is_admin: bool
    is_teacher: bool
    can_create_projects: bool


class SessionOut(BaseModel):
    """The signed-in account and the CSRF token the app sends back in X-CSRF-Token on every write."""

    user: SessionUser
    csrf_token: str
    session_id: UUID | None  # None when the caller came with an API key


class Signup(Strict):
    email: Email
    password: str = PasswordField
    display_name: DisplayName | None = None


class SetupIn(Strict):
    """The first administrator, created with the set-up token `studyai up` printed."""

    token: str = TokenField
    email: Email
    password: str = PasswordField
    display_name: str | None = Field(default=None, max_length=200)


class ResetIn(Strict):
    token: str = TokenField
    password: str = PasswordField


class ResetCheck(Strict):
    token: str = TokenField


class ResetValid(BaseModel):
    valid: bool


class Forgot(Strict):
    email: Email


class Accepted(BaseModel):
    detail: str


class LinkStarted(BaseModel):
    url: str = Field(description="the school's sign-in page: send the browser there")


# The account itself


class ProfileChange(Strict):
    """PATCH /me: the name others see in member lists; null clears it (the email is shown instead)."""

    display_name: DisplayName | None


class PasswordChange(Strict):
    current_password: str | None = Field(
        default=None, max_length=1024, description="required when the account has a password"
    )
    new_password: str = PasswordField


class MeOut(record_fields(Account, exclude={"disabled_at"})):
    """The caller's account: never its password hash, only whether it has one."""

    school_login: bool = Field(default=False, description="the school's login (OIDC) is linked")


class SessionRow(record_fields(BrowserSession, exclude={"user_id", "revoked_at"})):
    """One of the caller's live browser sessions: never its cookie or the cookie's hash."""

    current: bool = Field(description="the session this request came with")


class KeyCreate(Strict):
    """A new key for the caller; it never expires unless given `expires_in_days` or `expires_at`."""

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

    @computed_field
    @property
    def status(self) -> Literal["active", "revoked", "expired"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= datetime.now(UTC):
            return "expired"
        return "active"


class KeyCreated(KeyOut):
    key: str = Field(description="the key itself: shown this once, stored only as its sha256")


class SecurityEventOut(record_fields(SecurityEvent)):
    actor_user_id: UUID | None = Field(description="who did it; null: the operator's CLI or a deleted user")


# Administration


class AccountOut(record_fields(Account)):
    disabled_at: datetime | None = Field(description="set: the account's sessions and keys fail")


class AccountCreate(Strict):
    """A new account an administrator makes (a teacher, by default), with a link to set its password."""

    email: Email
    display_name: DisplayName | None = None
    is_teacher: bool = True


class AccountChange(Strict):
    is_teacher: bool


class ResetLinkOut(BaseModel):
    link: str = Field(description="one use, until expires_at; sign-in with it ends the account's sessions")
    expires_at: datetime
    mailed: bool = Field(description="sent to the account's email (mail set up and the server took it)")


class AccountCreated(ResetLinkOut):
    account: AccountOut


# Invitations: codes, and invitations addressed to one person


class InvitationCreate(Strict):
    """A new invitation: whoever joins with its code becomes a member with `role`."""

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
    project_language: Literal["pt", "en", "auto"] = Field(
        description="the project's language: the join page speaks it (auto: the browser's)"
    )


class Join(Strict):
    code: str = CodeField


class JoinSignup(Strict):
    """A new account that joins at once: the code is the permission to create it."""

    code: str = CodeField
    email: Email
    password: str = PasswordField
    display_name: str | None = Field(default=None, min_length=1, max_length=200)


class Joined(BaseModel):
    project_id: UUID
    role: Role = Field(description="the caller's role now: joining never lowers a role they had")
    project_name: str


class JoinedByCode(Joined):
    outcome: Literal["joined", "promoted", "member"] = Field(
        description="joined: a new member; promoted: a member given the code's higher role; member: already"
        " one with that role or a higher one (nothing changed)"
    )


class JoinedWithAccount(JoinedByCode):
    session: SessionOut


class InvitationEmail(Strict):
    emails: list[Email] = Field(min_length=1, max_length=100)


class MailSent(BaseModel):
    sent: int


class MemberAdd(BaseModel):
    """An invitation for this address: its account, once signed in, accepts or declines it."""

    email: Email
    role: Role = "viewer"


class MemberInvited(BaseModel):
    """The same answer whether or not the address has an account."""

    email: str
    role: Role
    expires_at: datetime
    mailed: bool = Field(description="the invitation was mailed to the address")


class MemberInvitationOut(record_fields(PersonalInvitation, exclude={"project_id", "project_name"})):
    """A pending personal invitation, as the project's owners see it."""

    role: Role


class ReceivedInvitationOut(record_fields(PersonalInvitation, exclude={"email", "created_at"})):
    """One of the caller's pending invitations."""

    role: Role

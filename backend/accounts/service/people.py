"""The one way an account comes to be or gets a login linked to it. Every door calls this: the first
run's set-up, sign-up, joining with a code, an administrator, the command line, the school's login (OIDC)
and an LMS launch (LTI). Each writes the account's `user.created` / `identity.linked` event.

Policy that follows from who someone is lives here too: who may create projects, and which password a
person may choose."""

from dataclasses import asdict, dataclass
from typing import Literal
from uuid import UUID

from backend.accounts.errors import EmailTaken, NotFound
from core.accounts.passwords import check_password, hash_password_async
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, identities
from core.store.accounts.accounts import Account
from core.store.accounts.identities import Identity
from core.store.sql.access import Connection
from core.store.sql.pool import Database

EMAIL_TAKEN = Text("account.email_taken")


@dataclass(frozen=True, slots=True)
class Person:
    """What a door knows of someone it is about to give an account."""

    email: str  # normalised (core/accounts/emails.py)
    display_name: str | None = None
    password_hash: str | None = None
    is_admin: bool = False
    is_teacher: bool = False
    # Someone trusted vouches for the address (an administrator, the operator, the school's login); a
    # password sign-up or an LMS launch proves nothing of it.
    email_verified: bool = False


async def new_password_hash(password: str, settings: Settings, *, email: str) -> str:
    """The Argon2id hash of a password anyone may choose here; WeakPassword (with the reason: too short,
    too common, the email) otherwise. The one password policy: every door that sets one calls it. Hashed
    in a thread, with no connection held (the caller borrows one afterwards)."""
    check_password(password, min_length=settings.accounts.password_min_length, email=email)
    return await hash_password_async(password)


def existing(account: Account | None) -> Account:
    """The account a change found; NotFound when there was none (an unknown id)."""
    if account is None:
        raise NotFound("No such account.")
    return account


def may_create_projects(account: Account, settings: Settings) -> bool:
    """PROJECT_CREATORS: everyone, or teachers and administrators only."""
    if settings.accounts.project_creators == "everyone":
        return True
    return account.is_admin or account.is_teacher


# Who creates an account at a door of its own (sign-up, a school login): the account itself.
SELF: Literal["self"] = "self"


async def create(
    conn: Connection,
    audit: Audit,
    person: Person,
    *,
    via: str,
    by: UUID | Literal["self"] | None = SELF,
    details: dict[str, str] | None = None,
) -> Account:
    """A new account for `person`, logged `user.created` (via the door; its actor `by`: the account
    itself, an administrator, or None for the operator's command line); EmailTaken when the email has one
    (the insert decides a race between two doors)."""
    created = await accounts.create_account(conn, **asdict(person))
    if created is None:
        raise EmailTaken(EMAIL_TAKEN)
    actor = created.id if isinstance(by, str) else by
    await audit.event(conn, "user.created", actor, created.id, {"via": via, **(details or {})})
    return created


async def link(
    conn: Connection,
    audit: Audit,
    user_id: UUID,
    *,
    kind: str,
    issuer: str,
    subject: str,
    email: str | None,
    details: dict[str, str] | None = None,
) -> Identity:
    """Links the login (kind, issuer, subject) to the account, logged `identity.linked`. Returns the
    identity: linked to another account already when `identity.user_id` differs (a concurrent first
    sign-in won), in which case nothing is logged."""
    linked = await identities.link(
        conn, user_id=user_id, kind=kind, issuer=issuer, subject=subject, email=email
    )
    if linked.user_id == user_id:
        shown = {"kind": kind, "issuer": issuer, **(details or {})}
        await audit.own(conn, "identity.linked", user_id, shown, target_id=str(linked.id))
    return linked


@dataclass(frozen=True, slots=True)
class Profile:
    account: Account
    school_login: bool  # the school's login (OIDC) is linked to the account


async def profile(db: Database, *, user_id: UUID) -> Profile:
    """The account as its owner sees it; NotFound when it is gone."""
    async with db.connection() as conn:
        found = existing(await accounts.account(conn, user_id=user_id))
        return Profile(found, await accounts.has_school_login(conn, user_id=user_id))


async def rename(db: Database, *, user_id: UUID, display_name: str | None) -> Profile:
    """Sets the name others see (None clears it: the e-mail is shown instead)."""
    async with db.connection() as conn:
        found = existing(await accounts.set_display_name(conn, user_id=user_id, display_name=display_name))
        return Profile(found, await accounts.has_school_login(conn, user_id=user_id))

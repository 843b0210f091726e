"""Signing a browser in: a password checked (the same cost whether or not the email has an account), a
session row and its `session.created` event, and what the app reads back. The cookie itself is the
route's (backend/web/browser.py); here a session is a token and a CSRF token."""

from uuid import UUID

from backend.accounts.errors import NotAllowed, WrongCredentials
from backend.accounts.service import people
from backend.accounts.service.people import Person
from core.accounts.passwords import verify_password_async
from core.messages import Text
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, sessions
from core.store.accounts.accounts import Account
from core.store.accounts.sessions import NewSession
from core.store.sql.access import Connection
from core.store.sql.pool import Database

WRONG_CREDENTIALS = Text("signin.wrong_credentials")
SIGNUP_OFF = Text("signup.off")


# A new browser session (its token goes into the cookie, its CSRF token to the app) and its account.
SignedIn = tuple[NewSession, Account]


async def start(conn: Connection, audit: Audit, settings: Settings, *, user_id: UUID, via: str) -> SignedIn:
    """Signs a browser in as user_id (a session row and its event), in the caller's transaction."""
    new = await sessions.create_session(
        conn,
        user_id=user_id,
        via=via,
        max_days=settings.accounts.session_max_days,
        user_agent=audit.user_agent,
        address=audit.address,
    )
    await audit.own(conn, "session.created", user_id, {"via": via})
    account = await accounts.account(conn, user_id=user_id)
    assert account is not None  # the caller just found or created it
    return new, account


async def login(db: Database, audit: Audit, settings: Settings, *, email: str, password: str) -> SignedIn:
    """The account's browser session when the password is right; WrongCredentials for a wrong password,
    an unknown email or a disabled account alike (same Argon2 cost: no account enumeration by timing)."""
    async with db.connection() as conn:
        found = await accounts.credentials(conn, email=email)
    matched = await verify_password_async(found.password_hash if found else None, password)
    if found is None or not matched or found.disabled_at is not None:
        if found is not None:
            async with db.connection() as conn:
                await audit.event(conn, "signin.failed", None, found.id, {"via": "password"})
        raise WrongCredentials(WRONG_CREDENTIALS)
    async with db.connection() as conn, conn.transaction():
        return await start(conn, audit, settings, user_id=found.id, via="password")


async def signup(
    db: Database, audit: Audit, settings: Settings, *, email: str, password: str, display_name: str | None
) -> SignedIn:
    """A new account with a password, signed in. The password is hashed before the email is looked up,
    so a taken email costs the same time as a free one. NotAllowed while SIGNUP_ENABLED is off."""
    if not settings.accounts.signup_enabled:
        raise NotAllowed(SIGNUP_OFF)
    password_hash = await people.new_password_hash(password, settings, email=email)
    async with db.connection() as conn, conn.transaction():
        person = Person(email=email, display_name=display_name, password_hash=password_hash)
        created = await people.create(conn, audit, person, via="signup")
        return await start(conn, audit, settings, user_id=created.id, via="signup")


async def current(db: Database, *, user_id: UUID) -> Account:
    async with db.connection() as conn:
        account = await accounts.account(conn, user_id=user_id)
    assert account is not None  # the caller was found a moment ago
    return account

"""What every way in shares once the person is known: a new account with a password, and the browser
signed in (a session cookie, its `session.created` event, the SessionOut the app reads)."""

from uuid import UUID

from fastapi import HTTPException, Request, Response, status
from psycopg import AsyncConnection

from backend.schemas.auth import SessionOut, SessionUser
from backend.services import security_log
from backend.services.browser_sessions import start_session
from core.accounts.passwords import WeakPassword, check_password
from core.settings import Settings
from core.store import accounts
from core.store.accounts import Account


def refuse_weak_password(password: str, settings: Settings, email: str) -> None:
    """422 with the reason (too short, too common, the email) for a password nobody should choose."""
    try:
        check_password(password, min_length=settings.accounts.password_min_length, email=email)
    except WeakPassword as weak:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(weak)) from None


async def session_out(
    conn: AsyncConnection, user_id: UUID, csrf_token: str, session_id: UUID | None
) -> SessionOut:
    account = await accounts.account(conn, user_id=user_id)
    assert account is not None  # the caller just found or created it
    user = SessionUser(
        id=account.id, email=account.email, display_name=account.display_name, is_admin=account.is_admin
    )
    return SessionOut(user=user, csrf_token=csrf_token, session_id=session_id)


async def log_session_created(conn: AsyncConnection, request: Request, user_id: UUID, via: str) -> None:
    await security_log.record_own(conn, request, "session.created", user_id, {"via": via})


async def sign_in_browser(
    conn: AsyncConnection,
    request: Request,
    response: Response,
    settings: Settings,
    *,
    user_id: UUID,
    via: str,
) -> SessionOut:
    """Signs the browser in as user_id (the cookie on `response`), logged, in the caller's transaction."""
    new = await start_session(conn, request, response, settings, user_id=user_id, via=via)
    await log_session_created(conn, request, user_id, via)
    return await session_out(conn, user_id, new.csrf_token, new.session.id)


async def create_password_account(
    conn: AsyncConnection,
    request: Request,
    *,
    email: str,
    password_hash: str,
    display_name: str | None,
    via: str,
    taken: str,
) -> Account:
    """A new account with this Argon2id hash and its `user.created` event; 409 with `taken` when the
    email has an account (the insert decides a race between two sign-ups)."""
    created = await accounts.create_account(
        conn, email=email, password_hash=password_hash, display_name=display_name
    )
    if created is None:
        raise HTTPException(status.HTTP_409_CONFLICT, taken)
    await security_log.record_own(conn, request, "user.created", created.id, {"via": via})
    return created

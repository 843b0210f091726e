"""Self-service sign-up: an account with a password and a signed-in browser, when the server allows it
(SIGNUP_ENABLED; off, people arrive through an invitation, OIDC or LTI). Attempts are limited by the
per-address budget of every request (backend/middleware/rate_limits.py)."""

from fastapi import APIRouter, HTTPException, Request, Response, status

from backend.deps import DbDep, SameOrigin, SettingsDep
from backend.schemas.accounts import Signup
from backend.schemas.auth import SessionOut
from backend.services.sign_in import create_password_account, refuse_weak_password, sign_in_browser
from core.accounts.passwords import hash_password_async
from core.store import accounts

router = APIRouter(tags=["sign-in"])
SIGNUP_OFF = "Self-service sign-up is off: ask your teacher for an invitation code."
EMAIL_TAKEN = "An account with this email already exists: sign in instead."


@router.post("/auth/signup", status_code=status.HTTP_201_CREATED, dependencies=[SameOrigin])
async def signup(
    body: Signup, request: Request, response: Response, db: DbDep, settings: SettingsDep
) -> SessionOut:
    """Creates an account with a password and signs the browser in (a session cookie). 403 while
    sign-up is off, 422 with the reason for a weak password, 409 when the email has an account."""
    if not settings.accounts.signup_enabled:
        raise HTTPException(status.HTTP_403_FORBIDDEN, SIGNUP_OFF)
    email = body.email.strip().lower()
    refuse_weak_password(body.password, settings, email)
    # Checked before hashing so a taken email costs no Argon2 time; the insert below decides races.
    async with db.connection() as conn:
        if await accounts.account_by_email(conn, email=email) is not None:
            raise HTTPException(status.HTTP_409_CONFLICT, EMAIL_TAKEN)
    # Hashed in a thread with no connection held: a burst of sign-ups never holds the pool on Argon2.
    password_hash = await hash_password_async(body.password)
    async with db.connection() as conn, conn.transaction():
        created = await create_password_account(
            conn,
            request,
            email=email,
            password_hash=password_hash,
            display_name=body.display_name,
            via="signup",
            taken=EMAIL_TAKEN,
        )
        return await sign_in_browser(conn, request, response, settings, user_id=created.id, via="signup")

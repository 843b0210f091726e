"""What the routes of the accounts domain share once a service has answered: the session the app reads,
and the cookie of a browser that was just signed in (backend/web/browser.py)."""

from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from backend.accounts.schemas import SessionOut, SessionUser
from backend.accounts.service.people import may_create_projects
from backend.accounts.service.sign_in import SignedIn
from backend.web.browser import set_session_cookie
from core.settings import Settings
from core.store.accounts import Account


def session_out(
    account: Account, settings: Settings, *, csrf_token: str, session_id: UUID | None
) -> SessionOut:
    user = SessionUser(
        id=account.id,
        email=account.email,
        display_name=account.display_name,
        is_admin=account.is_admin,
        is_teacher=account.is_teacher,
        can_create_projects=may_create_projects(account, settings),
    )
    return SessionOut(user=user, csrf_token=csrf_token, session_id=session_id)


def signed_in(response: Response, request: Request, settings: Settings, signed: SignedIn) -> SessionOut:
    """Sets the new session's cookie on `response` and returns what the app reads."""
    new = signed.session
    set_session_cookie(response, request, settings, new.token)
    return session_out(signed.account, settings, csrf_token=new.csrf_token, session_id=new.session.id)

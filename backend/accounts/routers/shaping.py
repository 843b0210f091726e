"""What the routes of the accounts domain share: the session the app reads, and the door a browser is
signed in through (what such a route works with, and the cookie it sets: backend/web/browser.py)."""

from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from fastapi import Depends
from psycopg_pool import AsyncConnectionPool
from starlette.requests import Request
from starlette.responses import Response

from backend.accounts.schemas import SessionOut, SessionUser
from backend.accounts.service.people import may_create_projects
from backend.accounts.service.sign_in import SignedIn
from backend.deps import DbDep, SettingsDep
from backend.web.audit import AuditDep
from backend.web.browser import set_session_cookie
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts.accounts import Account


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
    new, account = signed
    set_session_cookie(response, request, settings, new.token)
    return session_out(account, settings, csrf_token=new.csrf_token, session_id=new.session.id)


@dataclass(frozen=True)
class Door:
    """What a route that signs a browser in works with: the pool, the settings and the audit context its
    service takes, and the request and response its session cookie travels on."""

    request: Request
    response: Response
    db: AsyncConnectionPool
    settings: Settings
    audit: Audit

    def signed_in(self, signed: SignedIn) -> SessionOut:
        return signed_in(self.response, self.request, self.settings, signed)


def door_of(request: Request, response: Response, db: DbDep, settings: SettingsDep, audit: AuditDep) -> Door:
    return Door(request, response, db, settings, audit)


DoorDep = Annotated[Door, Depends(door_of)]

"""The caller's own account: profile, password, browser sessions, API keys, account events, and the
invitations addressed to them."""

from dataclasses import asdict
from uuid import UUID

from fastapi import APIRouter, Request, Response, status

from backend.accounts import schemas
from backend.accounts.budgets import TOO_MANY_PASSWORDS, BudgetsDep
from backend.accounts.service import credentials, invitations, people
from backend.deps import DbDep, SettingsDep, UserDep
from backend.web.audit import AuditDep
from backend.web.browser import clear_session_cookie
from backend.web.paging import EventPageDep

router = APIRouter(prefix="/me", tags=["account"])


@router.get("")
async def me(db: DbDep, user: UserDep) -> schemas.MeOut:
    """The caller's account; `has_password` says whether it can sign in with one (never the hash), and
    `school_login` whether the school's login is linked to it."""
    shown = await people.profile(db, user_id=user.id)
    return schemas.MeOut.model_validate({**asdict(shown.account), "school_login": shown.school_login})


@router.patch("")
async def change_profile(body: schemas.ProfileChange, db: DbDep, user: UserDep) -> schemas.MeOut:
    """Sets the caller's display name (null clears it)."""
    shown = await people.rename(db, user_id=user.id, display_name=body.display_name)
    return schemas.MeOut.model_validate({**asdict(shown.account), "school_login": shown.school_login})


@router.post("/password", status_code=status.HTTP_204_NO_CONTENT)
async def change_password(
    body: schemas.PasswordChange,
    db: DbDep,
    settings: SettingsDep,
    user: UserDep,
    audit: AuditDep,
    budgets: BudgetsDep,
) -> Response:
    """Sets a new password. An account that has one must give it (403 when wrong, and it spends the
    account's sign-in failure budget: a stolen session cannot guess the password here either); one
    signed in only through its school sets its first from a fresh school sign-in (403 otherwise, and
    always with an API key). Every other session and every key of the account end."""
    async with budgets.password(user.email, detail=TOO_MANY_PASSWORDS):
        await credentials.change_password(
            db, audit, settings, user_id=user.id, session_id=user.session_id, **body.model_dump()
        )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/sessions")
async def list_sessions(db: DbDep, settings: SettingsDep, user: UserDep) -> list[schemas.SessionRow]:
    """The caller's live browser sessions, newest first; `current` marks the one of this request."""
    rows = await credentials.list_sessions(db, settings, user_id=user.id)
    shown = [{**asdict(row), "current": row.id == user.session_id} for row in rows]
    return [schemas.SessionRow.model_validate(row) for row in shown]


@router.delete("/sessions/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_session(
    session_id: UUID, request: Request, db: DbDep, settings: SettingsDep, user: UserDep, audit: AuditDep
) -> Response:
    """Ends one of the caller's sessions (a browser left signed in elsewhere): its cookie fails on its
    next request. 404 for a session of someone else, an unknown or an already ended one."""
    own = session_id == user.session_id
    await credentials.end_session(db, audit, user_id=user.id, session_id=session_id, via="account", own=own)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    if own:  # this browser signed itself out
        clear_session_cookie(response, request, settings)
    return response


@router.get("/keys")
async def list_keys(db: DbDep, user: UserDep) -> list[schemas.KeyOut]:
    """Every key of the caller, newest first, revoked and expired ones included."""
    return [schemas.KeyOut.model_validate(row) for row in await credentials.list_keys(db, user_id=user.id)]


@router.post("/keys", status_code=status.HTTP_201_CREATED)
async def create_key(
    body: schemas.KeyCreate, db: DbDep, user: UserDep, settings: SettingsDep, audit: AuditDep
) -> schemas.KeyCreated:
    """A new key, returned once in `key`. At most API_KEYS_MAX_PER_USER live keys per user (409). A
    password change or reset, or the account being disabled, ends every key."""
    key, row = await credentials.create_key(
        db, audit, settings, user_id=user.id, name=body.name, expires_at=body.expiry()
    )
    return schemas.KeyCreated(**asdict(row), key=key)


@router.delete("/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT)
async def revoke_key(key_id: UUID, db: DbDep, user: UserDep, audit: AuditDep) -> Response:
    """Revokes one of the caller's keys (the one in use too): it fails on the next request, everywhere."""
    await credentials.revoke_key(db, audit, user_id=user.id, key_id=key_id, in_use=user.key_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/audit")
async def my_events(db: DbDep, user: UserDep, page: EventPageDep) -> list[schemas.SecurityEventOut]:
    """The caller's account events (keys created and revoked, by them or by the operator), newest first."""
    rows = await credentials.own_events(db, user_id=user.id, page=page)
    return [schemas.SecurityEventOut.model_validate(row) for row in rows]


@router.get("/invitations")
async def my_invitations(db: DbDep, user: UserDep) -> list[schemas.ReceivedInvitationOut]:
    """Invitations addressed to the caller's email that wait for an answer, newest first."""
    rows = await invitations.received(db, user_id=user.id)
    return [schemas.ReceivedInvitationOut.model_validate(row) for row in rows]


@router.post("/invitations/{invitation_id}/accept")
async def accept_invitation(invitation_id: UUID, db: DbDep, user: UserDep, audit: AuditDep) -> schemas.Joined:
    """Joins the project with the invitation's role (never lowering one the caller has). 404 when the
    invitation is not the caller's, or no longer waits for an answer."""
    answered = await invitations.answer(db, audit, user_id=user.id, invitation_id=invitation_id, accept=True)
    assert answered.role is not None  # accepted: a member now
    return schemas.Joined.model_validate(answered, from_attributes=True)


@router.delete("/invitations/{invitation_id}", status_code=status.HTTP_204_NO_CONTENT)
async def decline_invitation(invitation_id: UUID, db: DbDep, user: UserDep, audit: AuditDep) -> Response:
    await invitations.answer(db, audit, user_id=user.id, invitation_id=invitation_id, accept=False)
    return Response(status_code=status.HTTP_204_NO_CONTENT)

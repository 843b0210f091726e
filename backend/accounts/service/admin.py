"""What administrators do to accounts: list them, create one (a teacher, by default) with a link to set
its password, mark teachers, and read the whole security log. Disabling, enabling and reset links are
credentials' and recovery's; the routes and the command line call the same functions."""

from dataclasses import dataclass
from uuid import UUID

from backend.accounts.service import people, recovery
from backend.accounts.service.people import Person, existing
from backend.accounts.service.recovery import ResetLink
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, security_events
from core.store.accounts.accounts import Account
from core.store.accounts.security_events import SecurityEvent
from core.store.sql.access import Connection
from core.store.sql.listing import Page
from core.store.sql.pool import Database


@dataclass(frozen=True, slots=True)
class Created:
    account: Account
    link: ResetLink


async def list_accounts(db: Database, *, query: str | None, page: Page) -> list[Account]:
    async with db.connection() as conn:
        return await accounts.list_accounts(conn, query=query, page=page)


async def create_account(
    db: Database,
    audit: Audit,
    settings: Settings,
    *,
    base: str,
    admin_id: UUID,
    email: str,
    display_name: str | None,
    is_teacher: bool,
) -> Created:
    """A new account without a password and a one-time link that sets it (RESET_LINK_HOURS), mailed to
    the account's address when mail is set up; EmailTaken when the email has an account."""
    async with db.connection() as conn, conn.transaction():
        person = Person(email=email, display_name=display_name, is_teacher=is_teacher, email_verified=True)
        created = await people.create(conn, audit, person, via="admin", by=admin_id)
        if is_teacher:
            await _teacher_event(conn, audit, admin_id, created.id, True)
    link = await recovery.admin_link(db, audit, settings, base=base, admin_id=admin_id, user_id=created.id)
    return Created(created, link)


async def set_teacher(
    db: Database, audit: Audit, *, admin_id: UUID | None, user_id: UUID, teacher: bool
) -> Account:
    async with db.connection() as conn, conn.transaction():
        changed = existing(await accounts.set_teacher(conn, user_id=user_id, teacher=teacher))
        await _teacher_event(conn, audit, admin_id, user_id, teacher)
    return changed


async def _teacher_event(
    conn: Connection, audit: Audit, admin_id: UUID | None, user_id: UUID, teacher: bool
) -> None:
    action = "user.teacher_granted" if teacher else "user.teacher_revoked"
    await audit.event(conn, action, admin_id, user_id, {} if admin_id else {"via": "cli"})


async def events(db: Database, *, page: Page) -> list[SecurityEvent]:
    async with db.connection() as conn:
        return await security_events.all_events(conn, page=page)

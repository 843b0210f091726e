"""What the LTI routes do, on the pool and plain values (no request): a login initiation's redirect; a
launch checked and opened (its person, project, membership and one-time ticket); the ticket's holder, and
the ticket spent to sign a browser in; the platforms an administrator (or the operator) registers."""

from dataclasses import dataclass
from uuid import UUID

from backend.accounts.errors import Conflict, NotFound
from backend.accounts.lti.keys import LtiKeys
from backend.accounts.lti.launch import Launch, record_nonce, spend_flow, verify
from backend.accounts.lti.login import LoginRequest, start_login
from backend.accounts.lti.people import Opened, open_launch
from backend.accounts.lti.schemas import PlatformIn
from backend.accounts.service.sign_in import SignedIn, start
from core.observability.audit import Audit
from core.settings import Settings
from core.store.accounts import accounts, projects
from core.store.accounts import lti as lti_store
from core.store.accounts.accounts import Account
from core.store.accounts.lti import Platform
from core.store.sql.access import Connection
from core.store.sql.pool import Database

REGISTERED = "A platform with this issuer and client id is registered already."


@dataclass(frozen=True, slots=True)
class Launched:
    launch: Launch
    opened: Opened
    project_name: str


async def login_redirect(db: Database, login: LoginRequest, *, launch_url: str) -> str:
    """The platform's authorization URL this browser goes to; LoginRefused with the reason."""
    async with db.connection() as conn:
        return await start_login(conn, login, launch_url=launch_url)


async def launch(db: Database, audit: Audit, keys: LtiKeys, *, id_token: str, state: str) -> Launched:
    """The launch `state` and `id_token` carry, every check passed (LaunchRefused otherwise), and what it
    opened. The platform's keys may be fetched meanwhile: no connection is held then."""
    async with db.connection() as conn:
        flow, platform = await spend_flow(conn, state)
    checked = await verify(id_token, flow, platform, keys)
    async with db.connection() as conn:
        await record_nonce(conn, checked)
        opened = await open_launch(conn, audit, checked)
        project = await projects.get_project(conn, project_id=opened.project_id, user_id=opened.user_id)
    return Launched(checked, opened, project.name if project is not None else "studyAI")


async def ticket_holder(db: Database, *, ticket: str) -> Account | None:
    """Whose live ticket this is (an enabled account), without spending it."""
    async with db.connection() as conn:
        user_id = await lti_store.ticket_holder(conn, ticket=ticket)
        account = await accounts.account(conn, user_id=user_id) if user_id is not None else None
    return account if account is not None and account.disabled_at is None else None


async def use_ticket(
    db: Database, audit: Audit, settings: Settings, *, ticket: str
) -> tuple[SignedIn, str] | None:
    """The ticket spent: a browser session for its (enabled) account and where it goes; None when the
    ticket is unknown, used or expired."""
    async with db.connection() as conn, conn.transaction():
        spent = await lti_store.spend_ticket(conn, ticket=ticket)
        account = await accounts.account(conn, user_id=spent.user_id) if spent is not None else None
        if spent is None or account is None or account.disabled_at is not None:
            return None
        return await start(conn, audit, settings, user_id=account.id, via="lti"), spent.next_path


async def register_platform(
    db: Database, audit: Audit, *, actor_id: UUID | None, given: PlatformIn
) -> Platform:
    """A new platform (an LMS, as validated at the edge), logged; Conflict when its issuer and client id
    are registered already."""
    async with db.connection() as conn, conn.transaction():
        platform = await lti_store.register_platform(conn, **given.model_dump())
        if platform is None:
            raise Conflict(REGISTERED)
        await _platform_event(conn, audit, "lti.platform_registered", actor_id, platform)
    return platform


async def list_platforms(db: Database) -> list[Platform]:
    async with db.connection() as conn:
        return await lti_store.list_platforms(conn)


async def remove_platform(db: Database, audit: Audit, *, actor_id: UUID, platform_id: UUID) -> None:
    """Its course mappings go too (the projects and their members stay); its launches stop at once."""
    async with db.connection() as conn, conn.transaction():
        platform = await lti_store.delete_platform(conn, platform_id=platform_id)
        if platform is None:
            raise NotFound("No such platform.")
        await _platform_event(conn, audit, "lti.platform_removed", actor_id, platform)


async def _platform_event(
    conn: Connection, audit: Audit, action: str, actor_id: UUID | None, platform: Platform
) -> None:
    """What the security log keeps of a platform: how to recognise it (and `via: cli` from the shell)."""
    details: dict[str, object] = {
        "name": platform.name,
        "issuer": platform.issuer,
        "client_id": platform.client_id,
    }
    if actor_id is None:
        details["via"] = "cli"
    await audit.event(conn, action, actor_id, None, details, about=platform.id)

"""Who a checked launch stands for, and what it opens: the account linked to the platform's (iss, sub),
created at the first launch; the course's project, created at an instructor's first launch; the person's
membership from their LMS roles (never lowering a role they have); a one-time ticket into the app.

Accounts are never linked by email: an LMS does not say it verified an email, so a launch carrying
someone else's address must not open their account. A new account gets the launch's email when no
account has it, else `lti-<sha1(iss|sub)[:16]>@lti.invalid` (a reserved domain: no mail goes there)."""

import hashlib
import secrets
from dataclasses import dataclass
from uuid import UUID

from backend.accounts.errors import EmailTaken
from backend.accounts.lti.launch import Launch, LaunchRefused
from backend.accounts.service import people
from backend.accounts.service.people import Person
from core.accounts.emails import NotAnEmail, normalize_email
from core.accounts.secrets import new_token
from core.observability.audit import Audit
from core.store.accounts import accounts, identities, projects
from core.store.accounts import lti as lti_store
from core.store.accounts.accounts import Account
from core.store.sql.access import Connection

LIS = "http://purl.imsglobal.org/vocab/lis/v2/"
_OWNER_ROLES = frozenset(
    {
        LIS + "membership#Instructor",
        LIS + "membership#Administrator",
        LIS + "institution/person#Administrator",
        LIS + "system/person#Administrator",
        "Instructor",  # LTI 1.3 lets context roles be sent by their simple names
        "Administrator",
    }
)
_EDITOR_ROLES = frozenset(
    {LIS + "membership/Instructor#TeachingAssistant", LIS + "membership#ContentDeveloper", "ContentDeveloper"}
)
NOT_OPENED = "Your teacher has not opened studyAI in this course yet."
SYNTHETIC_DOMAIN = "@lti.invalid"  # a reserved domain: no mail goes there


def project_role(roles: list[str]) -> str:
    """Instructors and administrators own the course's project; teaching assistants and content
    developers edit it; everyone else (learners, mentors, guests) views it."""
    if _OWNER_ROLES.intersection(roles):
        return "owner"
    if _EDITOR_ROLES.intersection(roles):
        return "editor"
    return "viewer"


def short_roles(roles: list[str]) -> list[str]:
    """The roles as the log keeps them: the vocabulary's term after '#' or the last '/'."""
    return [role.rsplit("#", 1)[-1].rsplit("/", 1)[-1] for role in roles][:20]


class _LostRace(Exception):
    """The same person's first launch, running at once, linked the identity first: use its account."""

    def __init__(self, user_id: UUID) -> None:
        super().__init__(str(user_id))
        self.user_id = user_id


@dataclass(frozen=True)
class Opened:
    user_id: UUID
    project_id: UUID
    role: str
    ticket: str


async def open_launch(conn: Connection, audit: Audit, launch: Launch) -> Opened:
    """The person, project and membership of a checked launch, and its ticket; one transaction (a
    refusal leaves no account, project or membership behind). An instructor's launch marks the account a
    teacher (PROJECT_CREATORS=teachers lets teachers create projects)."""
    role = project_role(launch.roles)
    async with conn.transaction():
        user_id = await _person(conn, audit, launch)
        platform = launch.platform
        await lti_store.lock_context(conn, platform_id=platform.id, context_id=launch.context_id)
        project_id = await lti_store.context_project(
            conn, platform_id=platform.id, context_id=launch.context_id
        )
        created = project_id is None
        if project_id is None:
            if role != "owner":
                raise LaunchRefused(NOT_OPENED, status=403, platform=platform)
            project_id = await _course_project(conn, audit, launch, user_id)
        membership = await lti_store.join_at_least(conn, project_id=project_id, user_id=user_id, role=role)
        if role == "owner":
            await _mark_teacher(conn, audit, user_id, platform.id)
        await audit.event(
            conn,
            "lti.launch",
            user_id,
            user_id,
            {
                "roles": short_roles(launch.roles),
                "role": role,
                "membership": membership,
                "context_id": launch.context_id,
                "context_title": launch.context_title,
                "project_created": created,
            },
            project=project_id,
            about=platform.id,
        )
        ticket = new_token()
        await lti_store.issue_ticket(
            conn,
            ticket=ticket,
            user_id=user_id,
            platform_id=platform.id,
            next_path=f"/app/#/projects/{project_id}",
        )
    return Opened(user_id=user_id, project_id=project_id, role=role, ticket=ticket)


async def _mark_teacher(conn: Connection, audit: Audit, user_id: UUID, platform_id: UUID) -> None:
    account = await accounts.account(conn, user_id=user_id)
    if account is not None and not account.is_teacher:
        await accounts.set_teacher(conn, user_id=user_id, teacher=True)
        await audit.own(
            conn, "user.teacher_granted", user_id, {"via": "lti", "platform_id": str(platform_id)}
        )


async def _person(conn: Connection, audit: Audit, launch: Launch) -> UUID:
    issuer = launch.platform.issuer
    found = await identities.find(conn, kind="lti", issuer=issuer, subject=launch.subject)
    if found is not None:
        account = await accounts.account(conn, user_id=found.user_id)
        if account is None or account.disabled_at is not None:
            raise LaunchRefused("this account is disabled", status=403, platform=launch.platform)
        return account.id
    digest = hashlib.sha1(f"{issuer}|{launch.subject}".encode()).hexdigest()[:16]
    synthetic = f"lti-{digest}{SYNTHETIC_DOMAIN}"
    candidates = [email] if (email := _email(launch.email)) else []
    # The synthetic address is derived from public values: one someone signed up with first is not
    # theirs to take over, so a random suffix makes it unique instead.
    candidates += [synthetic, synthetic.replace("@", f"-{secrets.token_hex(4)}@")]
    name = launch.name[:200] if launch.name else None
    platform_id = str(launch.platform.id)
    try:
        async with conn.transaction():  # a savepoint: undone when a concurrent first launch won
            created = await _first_free(conn, audit, candidates, name, platform_id)
            linked = await people.link(
                conn,
                audit,
                created.id,
                kind="lti",
                issuer=issuer,
                subject=launch.subject,
                email=launch.email,
                details={"platform_id": platform_id},
            )
            if linked.user_id != created.id:
                raise _LostRace(linked.user_id)
    except _LostRace as race:
        return race.user_id
    return created.id


async def _first_free(
    conn: Connection, audit: Audit, emails: list[str], name: str | None, platform_id: str
) -> Account:
    for email in emails:
        try:
            async with conn.transaction():
                return await people.create(
                    conn,
                    audit,
                    Person(email=email, display_name=name),
                    via="lti",
                    details={"platform_id": platform_id},
                )
        except EmailTaken:
            continue
    raise LaunchRefused("no account could be created", status=409)  # pragma: no cover - the last is random


def _email(claimed: str | None) -> str | None:
    try:
        return normalize_email(claimed) if claimed else None
    except NotAnEmail:
        return None


async def _course_project(conn: Connection, audit: Audit, launch: Launch, user_id: UUID) -> UUID:
    name = (launch.context_title or f"Course {launch.context_id}")[:200]
    project = await projects.create_project(
        conn, user_id=user_id, name=name, description=f"Opened from {launch.platform.name}.", language="auto"
    )
    await lti_store.map_context(
        conn,
        platform_id=launch.platform.id,
        context_id=launch.context_id,
        project_id=project.id,
        title=launch.context_title,
    )
    details = {"via": "lti", "context_id": launch.context_id}
    await audit.event(conn, "project.created", user_id, None, details, project=project.id)
    return project.id

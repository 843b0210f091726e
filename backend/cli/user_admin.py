"""`studyai users setup-token | disable | enable | reset-link | teacher`, and the set-up link `studyai up`
prints while the server has no administrator: the operator's side of administration, straight on the
database (no key needed) through the accounts service the API uses, every change in the security log with
no actor (the CLI)."""

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import psycopg
import typer

from backend.accounts.errors import NotFound
from backend.accounts.service import admin, credentials, recovery
from backend.cli.migrate import apply_migrations
from core.accounts.emails import normalize_email
from core.observability.audit import Audit
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, security_events
from core.store.accounts.accounts import Account
from core.store.sql.pool import OneConnection

SETUP_TOKEN_HOURS = 24
T = TypeVar("T")


def base_url(settings: Settings, host: str | None = None, port: int | None = None) -> str:
    """PUBLIC_URL, else the address the API listens on (a wildcard host read as this machine)."""
    if settings.accounts.public_url:
        return settings.accounts.public_url
    listen = host or settings.api.host
    shown = "localhost" if listen in ("0.0.0.0", "::", "") else listen
    return f"http://{shown}:{port or settings.api.port}"


async def _on_db(database_url: str, work: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
    async with (
        await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn,
        conn.transaction(),
    ):
        return await work(conn)


def cli_audit(settings: Settings) -> Audit:
    """The command line's audit context: no request, no address."""
    return Audit(retention_days=settings.retention.security_events_days)


async def _log(conn: psycopg.AsyncConnection[Any], settings: Settings, action: str, user_id: Any) -> None:
    await security_events.insert_event(
        conn,
        action=action,
        actor_user_id=None,
        target_user_id=user_id,
        details={"via": "cli"},
        retention_days=settings.retention.security_events_days,
    )


async def grant_admin(conn: psycopg.AsyncConnection[Any], settings: Settings, user_id: Any) -> None:
    """Makes the account an administrator (`users create --admin`), logged as user.admin_granted."""
    await accounts.set_admin(conn, user_id=user_id)
    await _log(conn, settings, "user.admin_granted", user_id)


async def grant_teacher(conn: psycopg.AsyncConnection[Any], settings: Settings, user_id: Any) -> None:
    """Marks the account a teacher (`users create --teacher`), logged as user.teacher_granted."""
    await admin.set_teacher(
        OneConnection(conn), cli_audit(settings), admin_id=None, user_id=user_id, teacher=True
    )


def setup_link(database_url: str, settings: Settings, base: str) -> str | None:
    """A fresh first-run set-up link while no active administrator exists, else None."""

    async def work(conn: psycopg.AsyncConnection[Any]) -> str | None:
        if await accounts.count_admins(conn) > 0:
            return None
        token = await accounts.issue_token(conn, kind="setup", hours=SETUP_TOKEN_HOURS)
        return f"{base}/app/#/setup?token={token}"

    return asyncio.run(_on_db(database_url, work))


SETUP_LINK_FILE = "setup-link.txt"


def announce_setup(database_url: str, settings: Settings, base: str) -> None:
    """`studyai up`'s one line when the server has no administrator yet. The link itself is a secret: it
    goes to a file only its owner reads (<data dir>/setup-link.txt, mode 0600), and to the screen only
    when that is a terminal; the line a service manager or log shipper keeps names the file, never the
    token."""
    link = setup_link(database_url, settings, base)
    if link is None:
        return
    path = settings.services.data_dir / SETUP_LINK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(link + "\n")
    shown = f"Open {link}" if sys.stdout.isatty() else f"Open the link in {path}"
    typer.echo(
        f"studyai up: no administrator yet. {shown} to create one (valid {SETUP_TOKEN_HOURS} h, once;"
        f" it is also in {path})."
    )


def _with_database(work: Callable[[str, Settings], T]) -> T:
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        return work(urls.database_url, settings)


def setup_token() -> None:
    """Print a fresh set-up link for the first administrator (only while the server has none)."""
    link = _with_database(lambda url, settings: setup_link(url, settings, base_url(settings)))
    if link is None:
        typer.echo("studyai users setup-token: this server already has an administrator.", err=True)
        raise typer.Exit(1)
    typer.echo(link)


def _change(email: str, disabled: bool) -> Account | None:
    def work(url: str, settings: Settings) -> Account | None:
        async def change(conn: psycopg.AsyncConnection[Any]) -> Account | None:
            found = await accounts.account_by_email(conn, email=normalize_email(email))
            if found is None:
                return None
            return await credentials.set_disabled(
                OneConnection(conn), cli_audit(settings), actor_id=None, user_id=found.id, disabled=disabled
            )

        return asyncio.run(_on_db(url, change))

    return _with_database(work)


def _no_user(command: str, email: str) -> typer.Exit:
    typer.echo(f"studyai users {command}: no user has the email {email.strip().lower()}", err=True)
    return typer.Exit(1)


def disable(email: str) -> None:
    """Disable an account: every session and key of it ends now (enabling it later revives none)."""
    if _change(email, disabled=True) is None:
        raise _no_user("disable", email)
    typer.echo(f"disabled {email.strip().lower()}")


def enable(email: str) -> None:
    """Enable a disabled account again."""
    if _change(email, disabled=False) is None:
        raise _no_user("enable", email)
    typer.echo(f"enabled {email.strip().lower()}")


def reset_link(email: str) -> None:
    """Print a one-time link that sets the account's password (RESET_LINK_HOURS; earlier links stop)."""

    def work(url: str, settings: Settings) -> str | None:
        async def issue(conn: psycopg.AsyncConnection[Any]) -> str | None:
            found = await accounts.account_by_email(conn, email=normalize_email(email))
            if found is None:
                return None
            link = await recovery.issue_link(
                conn,
                cli_audit(settings),
                settings,
                base=base_url(settings),
                user_id=found.id,
                actor_id=None,
                via="cli",
            )
            return link.link

        return asyncio.run(_on_db(url, issue))

    link = _with_database(work)
    if link is None:
        raise _no_user("reset-link", email)
    typer.echo(link)


def teacher(email: str, off: bool = typer.Option(False, "--off", help="No longer a teacher.")) -> None:
    """Mark an account a teacher (with PROJECT_CREATORS=teachers only teachers and administrators
    create projects), or no longer one with --off."""

    def work(url: str, settings: Settings) -> Account | None:
        async def change(conn: psycopg.AsyncConnection[Any]) -> Account | None:
            found = await accounts.account_by_email(conn, email=normalize_email(email))
            if found is None:
                return None
            try:
                return await admin.set_teacher(
                    OneConnection(conn), cli_audit(settings), admin_id=None, user_id=found.id, teacher=not off
                )
            except NotFound:
                return None

        return asyncio.run(_on_db(url, change))

    if _with_database(work) is None:
        raise _no_user("teacher", email)
    typer.echo(f"{normalize_email(email)} is {'no longer ' if off else ''}a teacher")


def register(users_app: typer.Typer) -> None:
    users_app.command("setup-token")(setup_token)
    users_app.command("disable")(disable)
    users_app.command("enable")(enable)
    users_app.command("reset-link")(reset_link)
    users_app.command("teacher")(teacher)

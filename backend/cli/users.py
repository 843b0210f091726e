"""`studyai users`: create users, revoke and list their API keys, from the operator's shell (no API
key needed: the CLI talks to the database directly); every key action goes to the security log."""

import asyncio
from datetime import UTC, datetime, timedelta

import psycopg
import typer

from backend.accounts.service import people
from backend.accounts.service.people import Person
from backend.cli.migrate import apply_migrations
from backend.cli.user_admin import cli_audit, grant_admin, grant_teacher, register
from core.accounts.emails import normalize_email
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, security_events
from core.store.accounts import api_keys as user_store
from core.store.accounts.api_keys import ApiKey

users_app = typer.Typer(help="Users and API keys.", no_args_is_help=True)


@users_app.command("create")
def create_user(
    email: str,
    key_name: str = typer.Option("default", help="A label for the key."),
    add_key: bool = typer.Option(False, "--add-key", help="If the user exists, give them another key."),
    expires_in_days: int | None = typer.Option(
        None, min=1, max=3650, help="The key stops working after this many days (default: never)."
    ),
    admin: bool = typer.Option(False, "--admin", help="Make the user an administrator of the server."),
    teacher: bool = typer.Option(False, "--teacher", help="Mark the user a teacher (may create projects)."),
) -> None:
    """Create a user and print their API key, once. An existing email is refused (exit 1) unless
    --add-key is given: a typo must not silently hand someone's account a new key."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        key = asyncio.run(
            _create_user(
                urls.database_url, settings, email, key_name, add_key, expires_in_days, admin, teacher
            )
        )
    if key is None:
        typer.echo(
            f"studyai users create: a user with the email {email.strip().lower()} already exists;"
            " pass --add-key to give them another key.",
            err=True,
        )
        raise typer.Exit(1)
    if admin:
        typer.echo(
            f"{email.strip().lower()} is an administrator; for a password to sign in to the app, run"
            f" `studyai users reset-link {email.strip().lower()}`.",
            err=True,
        )
    typer.echo(key)


async def _create_user(
    database_url: str,
    settings: Settings,
    email: str,
    key_name: str,
    add_key: bool,
    expires_in_days: int | None,
    admin: bool = False,
    teacher: bool = False,
) -> str | None:
    email = normalize_email(email)
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        async with conn.transaction():
            user = await accounts.account_by_email(conn, email=email)
            if user is not None and not add_key:
                return None
            person = Person(email=email, email_verified=True)
            user = user or await people.create(conn, cli_audit(settings), person, via="cli", by=None)
            expires_at = datetime.now(UTC) + timedelta(days=expires_in_days) if expires_in_days else None
            key, row = await user_store.create_api_key_row(
                conn, user_id=user.id, name=key_name, expires_at=expires_at
            )
            details = {"name": key_name, "prefix": row.prefix, "via": "cli"}
            await _log_key_event(conn, settings, "key.created", row, details)
            if admin:
                await grant_admin(conn, settings, user.id)
            if teacher:
                await grant_teacher(conn, settings, user.id)
        return key


async def _log_key_event(
    conn: psycopg.AsyncConnection, settings: Settings, action: str, row: ApiKey, details: dict
) -> None:
    """The operator's key actions go to the security log too (no actor, no request id: the CLI)."""
    await security_events.insert_event(
        conn,
        action=action,
        actor_user_id=None,
        target_user_id=row.user_id,
        target_id=row.id,
        details=details,
        retention_days=settings.retention.security_events_days,
    )


@users_app.command("revoke")
def revoke_keys(
    key: str | None = typer.Argument(
        None, help="A key's id, its prefix as `users keys` lists it, or the key."
    ),
    email: str | None = typer.Option(None, help="With --all: the user whose keys to revoke."),
    all_keys: bool = typer.Option(False, "--all", help="Revoke every live key of --email."),
) -> None:
    """Revoke a key (by id, prefix or the key itself), or every key of a user (--email EMAIL --all).
    A revoked key fails on its next request, on every route."""
    if (key is None) == (email is None) or (email is not None and not all_keys):
        typer.echo("studyai users revoke: give a KEY (id or prefix), or --email EMAIL --all.", err=True)
        raise typer.Exit(2)
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        revoked, error = asyncio.run(_revoke(urls.database_url, settings, key, email))
    if error:
        typer.echo(f"studyai users revoke: {error}", err=True)
        raise typer.Exit(1)
    for row in revoked:
        typer.echo(f"revoked {row.id} {row.prefix} ({row.name})")
    if not revoked:
        typer.echo("no live key to revoke")


async def _revoke(
    database_url: str, settings: Settings, key: str | None, email: str | None
) -> tuple[list[ApiKey], str | None]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        async with conn.transaction():
            if email is not None:
                user = await accounts.account_by_email(conn, email=normalize_email(email))
                if user is None:
                    return [], f"no user has the email {email.strip().lower()}"
                revoked = await user_store.revoke_all_keys(conn, user_id=user.id)
            else:
                assert key is not None
                matches = await user_store.keys_matching(conn, id_or_prefix=key.strip())
                if not matches:
                    return [], "no key has that id or prefix"
                if len(matches) > 1:
                    ids = ", ".join(str(m.id) for m in matches)
                    return [], f"{len(matches)} keys start with that prefix ({ids}); give the id"
                row = await user_store.revoke_key(conn, user_id=matches[0].user_id, key_id=matches[0].id)
                revoked = [row] if row else []
            for row in revoked:
                details = {"name": row.name, "prefix": row.prefix, "via": "cli"}
                await _log_key_event(conn, settings, "key.revoked", row, details)
        return revoked, None


@users_app.command("keys")
def list_keys(email: str) -> None:
    """List a user's keys: id, prefix, status, name, created, last used, expires (never the key)."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        rows = asyncio.run(_list_keys(urls.database_url, email))
    if rows is None:
        typer.echo(f"studyai users keys: no user has the email {email.strip().lower()}", err=True)
        raise typer.Exit(1)
    now = datetime.now(UTC)
    for row in rows:
        status = (
            "revoked"
            if row.revoked_at
            else "expired"
            if row.expires_at and row.expires_at <= now
            else "active"
        )
        fields = [
            row.id,
            row.prefix,
            status,
            row.name,
            row.created_at,
            row.last_used_at,
            row.expires_at,
        ]
        typer.echo("\t".join("-" if value is None else str(value) for value in fields))


async def _list_keys(database_url: str, email: str) -> list[ApiKey] | None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        user = await accounts.account_by_email(conn, email=normalize_email(email))
        return None if user is None else await user_store.list_keys(conn, user_id=user.id)


register(users_app)  # setup-token, disable, enable, reset-link (backend/cli/user_admin.py)

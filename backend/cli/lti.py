"""`studyai lti`: register and list LTI 1.3 platforms (LMSs) from the operator's shell; a registration
goes to the security log (no actor: the CLI), as one through POST /admin/lti/platforms does."""

import asyncio

import psycopg
import typer
from pydantic import ValidationError

from backend.accounts.errors import Conflict
from backend.accounts.lti import service
from backend.accounts.lti.schemas import PlatformIn
from backend.cli.migrate import apply_migrations
from backend.cli.user_admin import cli_audit
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts.lti import Platform
from core.store.sql.pool import OneConnection

lti_app = typer.Typer(help="LTI 1.3 platforms (Moodle, Canvas, ...).", no_args_is_help=True)


@lti_app.command("register")
def register(
    name: str = typer.Option(..., help="A label, e.g. the school's Moodle."),
    issuer: str = typer.Option(..., help="The platform's issuer (iss), e.g. https://moodle.school.example."),
    client_id: str = typer.Option(..., "--client-id", help="The client id the platform gave this tool."),
    auth_login_url: str = typer.Option(..., "--auth-login-url", help="The platform's authorization URL."),
    jwks_url: str = typer.Option(..., "--jwks-url", help="The platform's public keyset URL."),
    deployment_id: list[str] = typer.Option(
        ..., "--deployment-id", help="A deployment id it launches from (repeat for several)."
    ),
) -> None:
    """Register a platform; prints its id. An issuer and client id registered already: exit 1."""
    given: dict[str, object] = {"name": name, "issuer": issuer, "client_id": client_id, "jwks_url": jwks_url}
    given |= {"auth_login_url": auth_login_url, "deployment_ids": deployment_id}
    try:
        body = PlatformIn.model_validate(given)
    except ValidationError as error:
        typer.echo(f"studyai lti register: {error}", err=True)
        raise typer.Exit(2) from None
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        platform = asyncio.run(_register(urls.database_url, settings, body))
    if platform is None:
        typer.echo(
            "studyai lti register: a platform with this issuer and client id exists already.", err=True
        )
        raise typer.Exit(1)
    typer.echo(str(platform.id))


async def _register(database_url: str, settings: Settings, body: PlatformIn) -> Platform | None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        try:
            return await service.register_platform(
                OneConnection(conn), cli_audit(settings), actor_id=None, given=body
            )
        except Conflict:
            return None


@lti_app.command("list")
def list_platforms() -> None:
    """The registered platforms: id, name, issuer, client id, deployment ids, keys."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        rows = asyncio.run(_list(urls.database_url))
    for row in rows:
        keys = row.jwks_url or "(stored key set)"
        fields = [row.id, row.name, row.issuer, row.client_id, ",".join(row.deployment_ids), keys]
        typer.echo("\t".join(str(value) for value in fields))
    if not rows:
        typer.echo("no LTI platform registered")


async def _list(database_url: str) -> list[Platform]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        return await service.list_platforms(OneConnection(conn))

"""`studyai migrate [--dry-run]`, and the migration step every command runs before it touches the
database: a database newer than this code, or a migration that fails, ends the command with one line
on stderr and exit status 1, not a traceback (README "Upgrading")."""

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql import migrations


@contextmanager
def migration_refusals_in_one_line() -> Iterator[None]:
    """A database newer than the code, or a migration that fails, ends the command with its message on
    stderr and exit status 1: the operator's to read (which release to run, which migration failed)."""
    try:
        yield
    except migrations.MigrationError as error:
        typer.echo(f"studyai: {error}", err=True)
        raise typer.Exit(1) from None


def apply_migrations(database_url: str) -> list[str]:
    """core.store.sql.migrations.apply_migrations, for the command line: its refusals printed, not raised."""
    with migration_refusals_in_one_line():
        return migrations.apply_migrations(database_url)


def migrate(
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the migrations that would run, in order, and change nothing."
    ),
) -> None:
    """Apply pending database migrations (each in its own transaction; a failed one is rolled back and
    the ones before it stay applied)."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        if dry_run:
            with migration_refusals_in_one_line():
                plan = migrations.plan_migrations(urls.database_url)
            typer.echo(f"current: {plan.current or 'none (an empty database)'}")
            typer.echo(
                f"would apply {len(plan.pending)}:" if plan.pending else "would apply: nothing (up to date)"
            )
            for name in plan.pending:
                typer.echo(f"  {name}")
            return
        applied = apply_migrations(urls.database_url)
    typer.echo(f"applied: {', '.join(applied) or 'nothing (up to date)'}")

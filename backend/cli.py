"""`studyai`: run the product, manage users, apply migrations."""

import asyncio
import logging
import os
import subprocess
import sys

import psycopg
import typer
import uvicorn

from backend.main import create_app
from core.migrations import apply_migrations
from core.services import EmbeddedServices
from core.settings import Settings
from core.store import users as user_store

app = typer.Typer(help="studyAI: a private, per-project RAG backend for studying.", no_args_is_help=True)
users_app = typer.Typer(help="Users and API keys.", no_args_is_help=True)
app.add_typer(users_app, name="users")


@app.command()
def up(
    host: str | None = typer.Option(None, help="API host (default from settings)."),
    port: int | None = typer.Option(None, help="API port (default from settings)."),
    worker: bool = typer.Option(True, help="Also run an indexing worker."),
) -> None:
    """Run the API and a worker, starting the embedded Postgres and Redis where no URL is set."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = Settings()
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        worker_process = None
        if worker:
            env = {**os.environ, "DATABASE_URL": urls.database_url, "REDIS_URL": urls.redis_url}
            worker_process = subprocess.Popen([sys.executable, "-m", "workers"], env=env)
        try:
            uvicorn.run(
                create_app(settings, urls), host=host or settings.api_host, port=port or settings.api_port
            )
        finally:
            if worker_process is not None:
                worker_process.terminate()
                worker_process.wait(timeout=30)


@app.command()
def migrate() -> None:
    """Apply pending database migrations."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        applied = apply_migrations(urls.database_url)
    typer.echo(f"applied: {', '.join(applied) or 'nothing (up to date)'}")


@users_app.command("create")
def create_user(email: str, key_name: str = typer.Option("default", help="A label for the key.")) -> None:
    """Create a user (or reuse one with this email) and print a new API key, once."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        key = asyncio.run(_create_user(urls.database_url, email, key_name))
    typer.echo(key)


async def _create_user(database_url: str, email: str, key_name: str) -> str:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        user = await user_store.create_user(conn, email=email)
        return await user_store.create_api_key(conn, user_id=user["id"], name=key_name)


if __name__ == "__main__":
    app()

"""`studyai`: run the product, manage users, apply migrations."""

import asyncio
import logging
import os
import signal
import subprocess
import sys
from uuid import UUID

import psycopg
import typer
import uvicorn

from backend.main import create_app
from backend.search_format import format_result
from core.db import open_pool
from core.embeddings import make_embeddings
from core.migrations import apply_migrations
from core.retrieval import Filters, RetrievalConfig, RetrievalResult, Retriever
from core.retrieval.rerankers.factory import make_reranker
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
    # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown; turning them into SystemExit lets
    # the worker and the embedded services below shut down too, instead of dying with the signal.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_quietly)
    settings = Settings()
    with EmbeddedServices(settings, llm=True) as urls:
        apply_migrations(urls.database_url)
        worker_process = None
        if worker:
            env = {**os.environ, "DATABASE_URL": urls.database_url, "REDIS_URL": urls.redis_url}
            if urls.llm_base_url:
                env["LLM_BASE_URL"] = urls.llm_base_url
            worker_process = subprocess.Popen([sys.executable, "-m", "workers"], env=env)
        try:
            uvicorn.run(
                create_app(settings, urls), host=host or settings.api_host, port=port or settings.api_port
            )
        finally:
            if worker_process is not None:
                worker_process.terminate()
                worker_process.wait(timeout=30)


def _exit_quietly(signum: int, frame: object) -> None:
    raise SystemExit(0)


@app.command()
def migrate() -> None:
    """Apply pending database migrations."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        applied = apply_migrations(urls.database_url)
    typer.echo(f"applied: {', '.join(applied) or 'nothing (up to date)'}")


@app.command()
def search(
    query: str,
    project: UUID = typer.Option(..., "--project", help="The project's id."),
    top_k: int | None = typer.Option(None, help="Results to return (default: the profile's)."),
    profile: str = typer.Option("search", help="planner, writer, qa, evaluator, generator or search."),
    document: list[UUID] = typer.Option([], help="Only these documents (repeatable)."),
    section: str | None = typer.Option(None, help="Only this section path prefix, 'A > B'."),
    reranker: str | None = typer.Option(None, help="none, blend, cross-encoder or http (default: settings)."),
    debug: bool = typer.Option(False, help="Also print the dense, lexical and fused lists and timings."),
) -> None:
    """Search a project from the command line, with the same retriever as the API (operator access)."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        filters = Filters(
            document_ids=tuple(document),
            section=tuple(p.strip() for p in (section or "").split(">") if p.strip()),
        )
        result = asyncio.run(
            _search(urls.database_url, settings, project, query, profile, top_k, filters, reranker)
        )
    typer.echo(format_result(result, debug=debug))


async def _search(
    database_url: str,
    settings: Settings,
    project: UUID,
    query: str,
    profile: str,
    top_k: int | None,
    filters: Filters,
    reranker_name: str | None,
) -> RetrievalResult:
    pool = await open_pool(database_url, max_size=2)
    try:
        embeddings = make_embeddings(settings)
        retriever = Retriever(
            pool, embeddings, make_reranker(settings, reranker_name), RetrievalConfig.from_settings(settings)
        )
        return await retriever.search(
            project_id=project, query=query, profile=profile, top_k=top_k, filters=filters
        )
    finally:
        await pool.close()


EVAL_SUITES = ("qa", "retrieval", "groundedness-judge")


# --help goes to the suite, whose options are the ones worth reading.
@app.command(
    "eval",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
def run_eval(
    ctx: typer.Context,
    suite: str = typer.Argument(..., help="qa, retrieval or groundedness-judge."),
) -> None:
    """Run an eval suite of evals/ and write its report; the suite's own options follow, e.g.
    `studyai eval qa --groundedness` (see `studyai eval SUITE --help`)."""
    if suite == "qa":
        from evals.qa.__main__ import main as suite_main
    elif suite == "retrieval":
        from evals.retrieval.__main__ import main as suite_main
    elif suite == "groundedness-judge":
        from evals.groundedness_judge import main as suite_main
    else:
        raise typer.BadParameter(f"unknown suite {suite!r}; one of {', '.join(EVAL_SUITES)}")
    suite_main(list(ctx.args))


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

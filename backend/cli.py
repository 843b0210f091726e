"""`studyai`: run the product, manage users, apply migrations, calibrate the embedding model."""

import asyncio
import logging
import signal
import sys
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from uuid import UUID

import psycopg
import typer
import uvicorn

from backend.main import create_app
from backend.search_format import format_result
from core.calibrate import CalibrationError, calibrate_project
from core.calibration import save_thresholds
from core.child_env import child_environment
from core.db import open_pool
from core.embeddings import make_embeddings
from core.local_llm import LlamaServer
from core.migrations import apply_migrations
from core.retrieval import Filters, RetrievalConfig, RetrievalResult, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store import security_events
from core.store import users as user_store
from core.supervisor import ChildSpec, ChildStartError, Supervisor

app = typer.Typer(help="studyAI: a private, per-project RAG backend for studying.", no_args_is_help=True)
users_app = typer.Typer(help="Users and API keys.", no_args_is_help=True)
app.add_typer(users_app, name="users")


@app.command()
def up(
    host: str | None = typer.Option(None, help="API host (default from settings)."),
    port: int | None = typer.Option(None, help="API port (default from settings)."),
    worker: bool = typer.Option(True, help="Also run the workers (one per queue: index, agents)."),
) -> None:
    """Run the API and the workers, starting the embedded Postgres, Redis and chat model where no URL is
    set. The workers and the model server are supervised: restarted with backoff when they die."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown; turning them into SystemExit lets
    # the children and the embedded services below shut down too, instead of dying with the signal.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_quietly)
    settings = Settings()
    # Leaving the block stops the supervised children first, then the embedded Postgres and Redis.
    with EmbeddedServices(settings) as service_urls, Supervisor() as supervisor:
        apply_migrations(service_urls.database_url)
        try:
            llm_base_url = settings.llm_base_url or _start_llm(settings, supervisor)
        except ChildStartError as error:
            logging.getLogger("studyai.up").critical("%s", error)
            typer.echo(f"studyai up: {error}", err=True)
            raise typer.Exit(1) from None
        urls = replace(service_urls, llm_base_url=llm_base_url)
        if worker:
            for spec in worker_specs(urls, settings):
                supervisor.start(spec)
        api = create_app(settings, urls)
        api.state.supervisor = supervisor  # GET /health/ready reports each child's state
        uvicorn.run(api, host=host or settings.api_host, port=port or settings.api_port)


def _start_llm(settings: Settings, supervisor: Supervisor) -> str:
    """The embedded model server, supervised: waits (LLM_START_TIMEOUT_S at most) until it answers."""
    server = LlamaServer.from_settings(settings)
    supervisor.start(server.child_spec())
    logging.getLogger("studyai.up").info("local chat model ready at %s", server.base_url)
    return server.base_url


WORKER_QUEUES = ("index", "agents")


def worker_specs(urls: ServiceUrls, settings: Settings) -> list[ChildSpec]:
    """One worker process per queue, so a minutes-long note never delays an upload's indexing."""
    overrides = {"DATABASE_URL": urls.database_url, "REDIS_URL": urls.redis_url}
    if urls.llm_base_url:
        overrides["LLM_BASE_URL"] = urls.llm_base_url
    if settings.llm_base_url is None and urls.llm_base_url:
        # The model server started here: the workers see its URL as an external one, and would
        # otherwise admit 4 calls at once and ask for function calling; they must share the API's
        # single slot and the llama grammar the judge was measured with.
        overrides["LLM_CONCURRENCY"] = str(settings.llm_concurrency or 1)
        if settings.llm_structured_output == "auto":
            overrides["LLM_STRUCTURED_OUTPUT"] = "llama-grammar"
    return [
        ChildSpec(
            name=f"worker-{queue}",
            command=[sys.executable, "-m", "workers", "--queue", queue],
            env=child_environment(overrides),
        )
        for queue in WORKER_QUEUES
    ]


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


@app.command()
def calibrate(
    project: UUID = typer.Option(..., "--project", help="A project with a question bank (20+ questions)."),
    save: bool = typer.Option(True, help="Write the values where the API and workers read them."),
) -> None:
    """Calibrate the embedding model's cosine thresholds on a project's questions (core/calibrate.py)."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        try:
            fitted, thresholds = asyncio.run(calibrate_project(urls.database_url, settings, project))
        except CalibrationError as error:
            typer.echo(f"studyai calibrate: {error}", err=True)
            raise typer.Exit(1) from None
    typer.echo(
        f"{settings.embedding_model}: y = {fitted.slope:.3f} x + {fitted.intercept:.3f} over {fitted.pairs}"
        f" pairs (r = {fitted.correlation:.3f}); related mean {fitted.related_mean[1]:.3f},"
        f" unrelated {fitted.unrelated_mean[1]:.3f}"
    )
    for name, value in asdict(thresholds).items():
        typer.echo(f"  {name}: {value}")
    if save:
        typer.echo(f"saved to {save_thresholds(settings.data_dir, settings.embedding_model, thresholds)}")


EVAL_SUITES = ("qa", "retrieval", "groundedness-judge", "grading")


# `studyai eval SUITE --help` goes to the suite, whose options are the ones worth reading; a bare
# `studyai eval --help` (the option where the suite would be) is this command's own help.
@app.command(
    "eval",
    no_args_is_help=True,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
def run_eval(
    ctx: typer.Context,
    suite: str = typer.Argument(..., help="qa, retrieval, groundedness-judge or grading."),
) -> None:
    """Run an eval suite of evals/ and write its report. Suites: qa, retrieval, groundedness-judge, grading.
    The suite's own options follow, e.g. `studyai eval qa --groundedness`; see `studyai eval SUITE --help`."""
    if suite in ("--help", "-h"):
        typer.echo(ctx.get_help())
        raise typer.Exit()
    if suite == "qa":
        from evals.qa.__main__ import main as suite_main
    elif suite == "retrieval":
        from evals.retrieval.__main__ import main as suite_main
    elif suite == "groundedness-judge":
        from evals.groundedness_judge import main as suite_main
    elif suite == "grading":
        from evals.grading.__main__ import main as suite_main
    else:
        raise typer.BadParameter(f"unknown suite {suite!r}; one of {', '.join(EVAL_SUITES)}")
    suite_main(list(ctx.args))


@users_app.command("create")
def create_user(
    email: str,
    key_name: str = typer.Option("default", help="A label for the key."),
    add_key: bool = typer.Option(False, "--add-key", help="If the user exists, give them another key."),
    expires_in_days: int | None = typer.Option(
        None, min=1, max=3650, help="The key stops working after this many days (default: never)."
    ),
) -> None:
    """Create a user and print their API key, once. An existing email is refused (exit 1) unless
    --add-key is given: a typo must not silently hand someone's account a new key."""
    settings = Settings()
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url)
        key = asyncio.run(
            _create_user(urls.database_url, settings, email, key_name, add_key, expires_in_days)
        )
    if key is None:
        typer.echo(
            f"studyai users create: a user with the email {email.strip().lower()} already exists;"
            " pass --add-key to give them another key.",
            err=True,
        )
        raise typer.Exit(1)
    typer.echo(key)


async def _create_user(
    database_url: str,
    settings: Settings,
    email: str,
    key_name: str,
    add_key: bool,
    expires_in_days: int | None,
) -> str | None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        async with conn.transaction():
            user = await user_store.user_by_email(conn, email=email)
            if user is not None and not add_key:
                return None
            user = user or await user_store.create_user(conn, email=email)
            expires_at = datetime.now(UTC) + timedelta(days=expires_in_days) if expires_in_days else None
            key, row = await user_store.create_api_key_row(
                conn, user_id=user["id"], name=key_name, expires_at=expires_at
            )
            details = {"name": key_name, "prefix": row["prefix"], "via": "cli"}
            await _log_key_event(conn, settings, "key.created", row, details)
        return key


async def _log_key_event(
    conn: psycopg.AsyncConnection, settings: Settings, action: str, row: dict, details: dict
) -> None:
    """The operator's key actions go to the security log too (no actor, no request id: the CLI)."""
    await security_events.insert_event(
        conn,
        action=action,
        actor_user_id=None,
        target_user_id=row["user_id"],
        target_id=row["id"],
        details=details,
        retention_days=settings.security_events_retention_days,
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
        typer.echo(f"revoked {row['id']} {row['prefix']} ({row['name']})")
    if not revoked:
        typer.echo("no live key to revoke")


async def _revoke(
    database_url: str, settings: Settings, key: str | None, email: str | None
) -> tuple[list[dict], str | None]:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        async with conn.transaction():
            if email is not None:
                user = await user_store.user_by_email(conn, email=email)
                if user is None:
                    return [], f"no user has the email {email.strip().lower()}"
                revoked = await user_store.revoke_all_keys(conn, user_id=user["id"])
            else:
                assert key is not None
                matches = await user_store.keys_matching(conn, id_or_prefix=key.strip())
                if not matches:
                    return [], "no key has that id or prefix"
                if len(matches) > 1:
                    ids = ", ".join(str(m["id"]) for m in matches)
                    return [], f"{len(matches)} keys start with that prefix ({ids}); give the id"
                row = await user_store.revoke_key(
                    conn, user_id=matches[0]["user_id"], key_id=matches[0]["id"]
                )
                revoked = [row] if row else []
            for row in revoked:
                details = {"name": row["name"], "prefix": row["prefix"], "via": "cli"}
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
            if row["revoked_at"]
            else "expired"
            if row["expires_at"] and row["expires_at"] <= now
            else "active"
        )
        fields = [
            row["id"],
            row["prefix"],
            status,
            row["name"],
            row["created_at"],
            row["last_used_at"],
            row["expires_at"],
        ]
        typer.echo("\t".join("-" if value is None else str(value) for value in fields))


async def _list_keys(database_url: str, email: str) -> list[dict] | None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        conn.row_factory = psycopg.rows.dict_row
        user = await user_store.user_by_email(conn, email=email)
        return None if user is None else await user_store.list_keys(conn, user_id=user["id"])


if __name__ == "__main__":
    app()

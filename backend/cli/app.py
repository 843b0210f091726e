"""`studyai`: run the product, manage users, apply migrations, calibrate the embedding model."""

import asyncio
import importlib
import logging
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from uuid import UUID

import typer
import uvicorn
from fastapi import FastAPI

from agents.runs.calibration import NotEnoughQuestions
from backend.cli.backup import backup, restore
from backend.cli.calibrate import refit_confidence, store_confidence
from backend.cli.calibrate_dev import default_data_dir, dev_set_calibration
from backend.cli.lti import lti_app
from backend.cli.migrate import apply_migrations, migrate, migration_refusals_in_one_line
from backend.cli.search_format import format_result
from backend.cli.user_admin import announce_setup, base_url
from backend.cli.users import users_app
from backend.main import create_app
from core.embeddings.calibrate import CalibrationError, calibrate_project
from core.embeddings.models import make_embeddings
from core.embeddings.thresholds import save_thresholds
from core.llm.local import LlamaServer
from core.retrieval import Filters, RetrievalResult
from core.runtime import ChatModelPlan, make_retriever
from core.runtime.child_env import child_environment
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.runtime.supervisor import ChildSpec, ChildStartError, Supervisor
from core.settings import Settings
from core.store.sql.pool import open_pool

app = typer.Typer(help="studyAI: a private, per-project RAG backend for studying.", no_args_is_help=True)
app.add_typer(users_app, name="users")
app.add_typer(lti_app, name="lti")
app.command()(migrate)
app.command()(backup)
app.command()(restore)


@app.command()
def up(
    host: str | None = typer.Option(None, help="API host (default from settings)."),
    port: int | None = typer.Option(None, help="API port (default from settings)."),
    worker: bool = typer.Option(True, help="Also run the workers (one per queue: index, agents)."),
) -> None:
    """Run the API and the workers, starting the embedded Postgres, Redis and chat model where no URL is
    set. The workers and the model server are supervised: restarted with backoff when they die."""
    configure_logging()
    # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown; turning them into SystemExit lets
    # the children and the embedded services below shut down too, instead of dying with the signal.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _exit_quietly)
    settings = Settings()
    # Leaving the block stops the supervised children first, then the embedded Postgres and Redis.
    with EmbeddedServices(settings, watch_postgres=True) as service_urls, Supervisor() as supervisor:
        apply_migrations(service_urls.database_url)
        try:
            llm_base_url = settings.llm.base_url or _start_llm(settings, supervisor)
        except ChildStartError as error:
            logging.getLogger("studyai.up").critical("%s", error)
            typer.echo(f"studyai up: {error}", err=True)
            raise typer.Exit(1) from None
        urls = replace(service_urls, llm_base_url=llm_base_url)
        if worker:
            for spec in worker_specs(urls, settings):
                supervisor.start(spec)
        api = create_app(settings, urls, supervisor=supervisor)  # GET /health/ready reports each child
        # No administrator yet: a one-time set-up link (a new one each start) creates the first one.
        announce_setup(urls.database_url, settings, base_url(settings, host, port))
        serve(api, host=host or settings.api.host, port=port or settings.api.port)


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")


def serve(api: FastAPI, *, host: str, port: int) -> None:
    """The API on uvicorn, as `studyai up` serves it. uvicorn's own access log would print each path
    with its query (a join code, an OIDC code and state): it is off, and the app writes its own access
    line with the secrets of paths redacted (backend/middleware/request_context.py)."""
    uvicorn.run(api, host=host, port=port, access_log=False)


def _start_llm(settings: Settings, supervisor: Supervisor) -> str:
    """The embedded model server, supervised: waits (LLM_START_TIMEOUT_S at most) until it answers."""
    server = LlamaServer.from_settings(settings)
    supervisor.start(server.child_spec())
    logging.getLogger("studyai.up").info("local chat model ready at %s", server.base_url)
    return server.base_url


WORKER_QUEUES = ("index", "agents")


def worker_specs(urls: ServiceUrls, settings: Settings) -> list[ChildSpec]:
    """One worker process per queue, so a minutes-long note never delays an upload's indexing. The
    workers get the chat model the API's runtime decides on (the same ChatModelPlan): an embedded
    server's single slot and the llama grammar the judge was measured with."""
    overrides = {
        "DATABASE_URL": urls.database_url,
        "REDIS_URL": urls.redis_url,
        **ChatModelPlan.decide(settings, urls).child_environment(),
    }
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
        retriever = make_retriever(settings, pool, make_embeddings(settings), reranker_name)
        return await retriever.search(
            project_id=project, query=query, profile=profile, top_k=top_k, filters=filters
        )
    finally:
        await pool.close()


@app.command()
def calibrate(
    project: UUID | None = typer.Option(
        None, "--project", help="A project with a question bank (20+ questions)."
    ),
    dev_set: bool = typer.Option(
        False, "--dev-set", help="Fit the confidence on the development questions instead of a project's."
    ),
    data: Path | None = typer.Option(None, help="--dev-set: the development data (default ../shared/data)."),
    save: bool = typer.Option(True, help="Write the values where the API and workers read them."),
    thresholds: bool = typer.Option(True, help="Calibrate the embedding model's cosine thresholds."),
    confidence: bool = typer.Option(
        True, help="Refit the answers' confidence on the project's approved items (runs the chat model)."
    ),
    limit: int = typer.Option(200, help="At most this many approved items are asked."),
    dev_limit: int = typer.Option(0, help="--dev-set: only this many questions of each set (a trial)."),
) -> None:
    """Calibrate the embedding model's cosine thresholds and the answers' confidence on a project's
    questions, for the models this server runs; or, with --dev-set, the confidence of answers and grades
    on the development questions (a new chat model labelled on day one)."""
    settings = Settings()
    if dev_set:
        _calibrate_on_dev_set(settings, data or default_data_dir(), limit=dev_limit, save=save)
        return
    if project is None:
        typer.echo("studyai calibrate: give --project ID, or --dev-set", err=True)
        raise typer.Exit(2)
    with EmbeddedServices(settings, redis=False, llm=confidence) as urls:
        apply_migrations(urls.database_url)
        try:
            if thresholds:
                _calibrate_thresholds(settings, urls, project, save=save)
            if confidence:
                _refit_confidence(settings, urls, project, limit=limit, save=save)
        except (CalibrationError, NotEnoughQuestions) as error:
            typer.echo(f"studyai calibrate: {error}", err=True)
            raise typer.Exit(1) from None


def _calibrate_thresholds(settings: Settings, urls: ServiceUrls, project: UUID, *, save: bool) -> None:
    fitted, values = asyncio.run(calibrate_project(urls.database_url, settings, project))
    typer.echo(
        f"{settings.embeddings.model}: y = {fitted.slope:.3f} x + {fitted.intercept:.3f} over {fitted.pairs}"
        f" pairs (r = {fitted.correlation:.3f}); related mean {fitted.related_mean[1]:.3f},"
        f" unrelated {fitted.unrelated_mean[1]:.3f}"
    )
    for name, value in asdict(values).items():
        typer.echo(f"  {name}: {value}")
    if save:
        typer.echo(
            f"saved to {save_thresholds(settings.services.data_dir, settings.embeddings.model, values)}"
        )


def _refit_confidence(
    settings: Settings, urls: ServiceUrls, project: UUID, *, limit: int, save: bool
) -> None:
    calibration = refit_confidence(settings, urls, project, limit=limit)
    typer.echo(
        f"confidence for {calibration.chat_model} + {calibration.embedding_model}: {calibration.fitted_on}"
    )
    for kind, model in calibration.kinds.items():
        typer.echo(
            f"  {kind}: high >= {model.high_min:.3f}, low < {model.low_below:.3f}"
            f" (signals: {', '.join(model.features)})"
        )
    if save:
        store_confidence(urls.database_url, calibration)
        typer.echo("saved to the database: every API and worker process labels with it within a minute")


def _calibrate_on_dev_set(settings: Settings, data: Path, *, limit: int, save: bool) -> None:
    if not (data / "rust-book" / "quizzes").is_dir():
        typer.echo(f"studyai calibrate: no development data in {data} (--data)", err=True)
        raise typer.Exit(1)
    with tempfile.TemporaryDirectory(prefix="studyai-dev-set-") as workdir:
        try:
            calibration = dev_set_calibration(settings, data, Path(workdir), limit=limit, echo=typer.echo)
        except subprocess.CalledProcessError as error:
            typer.echo(f"studyai calibrate: {' '.join(error.cmd[1:3])} failed ({error.returncode})", err=True)
            raise typer.Exit(1) from None
    pair = f"{calibration.chat_model} + {calibration.embedding_model}"
    typer.echo(f"confidence for {pair}: {calibration.fitted_on}")
    for kind, model in calibration.kinds.items():
        typer.echo(f"  {kind}: high >= {model.high_min:.3f} (signals: {', '.join(model.features) or 'none'})")
    if save:
        with EmbeddedServices(settings, redis=False) as urls:
            apply_migrations(urls.database_url)
            store_confidence(urls.database_url, calibration)
        typer.echo("saved to the database: every API and worker process labels with it within a minute")


# Each suite's module, imported when `studyai eval` runs it: the backend does not depend on evals.
EVAL_SUITES = {
    "qa": "evals.qa.__main__",
    "retrieval": "evals.retrieval.__main__",
    "groundedness-judge": "evals.groundedness_judge",
    "grading": "evals.grading.__main__",
}


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
    if suite not in EVAL_SUITES:
        raise typer.BadParameter(f"unknown suite {suite!r}; one of {', '.join(EVAL_SUITES)}")
    with migration_refusals_in_one_line():  # a suite's workdir migrated by a newer release
        importlib.import_module(EVAL_SUITES[suite]).main(list(ctx.args))


if __name__ == "__main__":
    app()

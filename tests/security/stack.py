"""A stack an attacker meets: a fresh database (a fresh install: no administrator yet), the API in a
process of its own on a local port with rate limits on, a real mail server (aiosmtpd) and a real OpenID
Connect provider, and clients that come from chosen loopback addresses (127.0.0.2, 127.0.0.3, …) as
different machines would. Everything the server process prints lands in one log file, which the log test
reads whole."""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from benchmarks.fake_model import free_port
from core.runtime.services import ServiceUrls
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import stop_worker
from tests.conftest import REPO_ROOT
from tests.mail_server import Inbox, smtp_server
from tests.oidc_provider import running_provider
from tests.processes import wait_for_health
from tests.upgrade.history import scratch_database

OIDC_CLIENT = "studyai-security-tests"
# Generous request budgets (the tests make many requests from few addresses); the sign-in budgets are
# the defaults, since they are what is under test.
GENEROUS = "100000/minute"


@dataclass
class Stack:
    base: str  # http://127.0.0.1:PORT, also PUBLIC_URL
    database_url: str
    issuer: str  # the OpenID Connect provider's
    inbox: Inbox
    log_path: Path
    process: subprocess.Popen[bytes]

    def client(self, address: str = "127.0.0.1", **headers: str) -> httpx.Client:
        """A client from this loopback address, as a browser of the app (its Origin) would send."""
        transport = httpx.HTTPTransport(local_address=address)
        return httpx.Client(
            base_url=self.base,
            transport=transport,
            timeout=60,
            headers={"Origin": self.base, **headers},
            follow_redirects=False,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def environment(
    urls: ServiceUrls, database_url: str, data_dir: Path, port: int, smtp_port: int, issuer: str
) -> dict[str, str]:
    base = f"http://127.0.0.1:{port}"
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("LLM_")}
    return {
        **inherited,
        "DATABASE_URL": database_url,
        "REDIS_URL": urls.redis_url,
        "STUDYAI_DATA_DIR": str(data_dir),
        "PUBLIC_URL": base,
        "RATE_LIMIT_ENABLED": "true",
        "LLM_REPLY_CACHE_S": "0",
        **{f"RATE_LIMIT_{name}": GENEROUS for name in ("AGENT", "UPLOAD", "READ", "PER_ADDRESS")},
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(smtp_port),
        "SMTP_SECURITY": "none",
        "SMTP_FROM": "studyai@school.example",
        "OIDC_ISSUER": issuer,
        "OIDC_CLIENT_ID": OIDC_CLIENT,
        "OIDC_CLIENT_SECRET": "security-tests-secret",
        "OIDC_NAME": "School",
    }


@contextmanager
def running_stack(urls: ServiceUrls, data_dir: Path) -> Iterator[Stack]:
    with ExitStack() as stack:
        database_url = stack.enter_context(scratch_database(urls.database_url))
        apply_migrations(database_url)
        inbox, smtp_port = stack.enter_context(smtp_server())
        issuer = stack.enter_context(running_provider())
        port = free_port()
        log_path = data_dir / f"api-{port}.log"
        env = environment(urls, database_url, data_dir, port, smtp_port, issuer)
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.security.serve", str(port)],
                env=env,
                stdout=log,
                stderr=log,
                cwd=REPO_ROOT,
            )
        stack.callback(stop_worker, process)  # the same end as a worker process
        base = env["PUBLIC_URL"]
        _wait_until_up(base, process, log_path)
        yield Stack(base, database_url, issuer, inbox, log_path, process)


def _wait_until_up(base: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    # 240 s: the lifespan loads the embedding model.
    outcome = wait_for_health(base, process, timeout=240, poll_s=0.2)
    if outcome == "exited":
        raise RuntimeError(f"the API process exited:\n{log_path.read_text()[-3000:]}")
    if outcome != "healthy":
        raise RuntimeError("the API process did not start in time")

"""`python -m workers.probe`: the liveness probe of a worker container (Kubernetes exec probe). Exit 0
when a worker process of this host (the pod) has beaten within three beats (workers/liveness.py), 1
otherwise: arq's per-queue health key would stay fresh while another pod's worker lives."""

import asyncio
import socket
import sys

import psycopg

from core.settings import Settings
from core.store.runs.workers import running_on


async def alive(database_url: str, host: str, beat_s: float) -> bool:
    async with await psycopg.AsyncConnection.connect(database_url, connect_timeout=5) as conn:
        return await running_on(conn, host, beat_s=beat_s)


def main() -> int:
    settings = Settings()
    if settings.services.database_url is None:
        print("workers.probe: DATABASE_URL is not set", file=sys.stderr)
        return 1
    try:
        ok = asyncio.run(alive(settings.services.database_url, socket.gethostname(), settings.workers.beat_s))
    except psycopg.Error as error:
        print(f"workers.probe: the database did not answer ({type(error).__name__})", file=sys.stderr)
        return 1
    if not ok:
        print(f"workers.probe: no worker process of {socket.gethostname()} beat recently", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The async connection pool, opened at start-up and passed in; pgvector types registered on it.

Connections are borrowed per unit of SQL work (`async with pool.connection() as conn`) and given back
before any model call, stream or embedding, so a request never holds one while it waits on something
else. Each borrowed connection is checked first (a cheap empty query): after a Postgres restart the
stale ones are dropped and replaced instead of failing the request that drew them."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


async def _configure(conn: AsyncConnection) -> None:
    await register_vector_async(conn)
    await conn.set_autocommit(True)


async def open_pool(
    database_url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0
) -> AsyncConnectionPool:
    """`timeout`: seconds a borrower waits for a free connection before PoolTimeout (the API answers
    that with 503). Callers run migrations first: the vector type must exist before connections
    register it."""
    pool = AsyncConnectionPool(
        database_url,
        min_size=min(min_size, max_size),
        max_size=max_size,
        timeout=timeout,
        # No server-side prepared statements: after 5 runs PostgreSQL switches to a generic plan, and
        # for the retriever's `id = ANY(...)` and project filters that plan walks whole projects.
        kwargs={"row_factory": dict_row, "prepare_threshold": None},
        configure=_configure,
        # A connection killed under the pool (server restart, idle kill, failover) fails this check
        # at checkout and is replaced, so the first request after a restart succeeds.
        check=AsyncConnectionPool.check_connection,
        # While the server is down the pool retries with exponential backoff (1, 2, 4 s...) and gives
        # up after reconnect_timeout; the next borrower then starts a fresh attempt at once. Keeping
        # this no longer than the wait timeout keeps the gap between attempts shorter than a
        # borrower's wait, so the first request after the server is back gets a connection.
        reconnect_timeout=max(timeout, 2.0),
        open=False,
    )
    await pool.open(wait=True)
    return pool


class Database(Protocol):
    """What a service borrows connections from: the pool, or the command line's one connection."""

    def connection(self) -> AbstractAsyncContextManager[AsyncConnection[Any]]: ...


class OneConnection:
    """A single open connection lent like a pool (the command line has no pool)."""

    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self._conn = conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        yield self._conn

"""The async connection pool, opened at start-up and passed in; pgvector types registered on it."""

from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


async def _configure(conn: AsyncConnection) -> None:
    await register_vector_async(conn)
    await conn.set_autocommit(True)


async def open_pool(database_url: str, *, min_size: int = 1, max_size: int = 10) -> AsyncConnectionPool:
    """Callers run migrations first: the vector type must exist before connections register it."""
    pool = AsyncConnectionPool(
        database_url,
        min_size=min_size,
        max_size=max_size,
        # No server-side prepared statements: after 5 runs PostgreSQL switches to a generic plan, and
        # for the retriever's `id = ANY(...)` and project filters that plan walks whole projects.
        kwargs={"row_factory": dict_row, "prepare_threshold": None},
        configure=_configure,
        open=False,
    )
    await pool.open(wait=True)
    return pool

"""The deployment's LTI tool key (migration 0021): one row every API replica reads, so all of them
publish the same key set to the LMS. The first process that needs it stores its candidate; a process
racing it reads the winner's."""

from psycopg.rows import scalar_row

from core.store.sql.access import Connection
from core.store.sql.rows import fetch_one, fetch_required

TOOL_KEY = "lti_tool"


async def stored_tool_key(conn: Connection) -> str | None:
    return await fetch_one(conn, scalar_row, "SELECT pem FROM deployment_keys WHERE name = %s", (TOOL_KEY,))


async def keep_tool_key(conn: Connection, candidate_pem: str) -> str:
    """The stored key: `candidate_pem` if none was stored yet, else the one already there."""
    await conn.execute(
        "INSERT INTO deployment_keys (name, pem) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
        (TOOL_KEY, candidate_pem),
    )
    return await fetch_required(
        conn, scalar_row, "SELECT pem FROM deployment_keys WHERE name = %s", (TOOL_KEY,)
    )

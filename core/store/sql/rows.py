"""One statement's rows as typed records: the cursor each store read would otherwise open itself.

The statement keeps all of its scoping (project, membership, role) in its own SQL; these only run it
with the row factory that builds the records (class_row(Record), kwargs_row(build), scalar_row)."""

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

from psycopg.abc import Params
from psycopg.abc import QueryNoTemplate as Query
from psycopg.rows import AsyncRowFactory

from core.store.sql.access import Connection

Row = TypeVar("Row")


async def fetch_one(conn: Connection, rows: AsyncRowFactory[Row], query: Query, params: Params) -> Row | None:
    """The first row, or None when the statement returns none."""
    async with conn.cursor(row_factory=rows) as cur:
        await cur.execute(query, params)
        return await cur.fetchone()


async def fetch_all(conn: Connection, rows: AsyncRowFactory[Row], query: Query, params: Params) -> list[Row]:
    async with conn.cursor(row_factory=rows) as cur:
        await cur.execute(query, params)
        return await cur.fetchall()


async def fetch_required(conn: Connection, rows: AsyncRowFactory[Row], query: Query, params: Params) -> Row:
    """The row of a statement that always returns one (an aggregate, an upsert's RETURNING)."""
    row = await fetch_one(conn, rows, query, params)
    if row is None:  # a broken invariant, not a missing row: such a statement always returns one
        raise LookupError("the statement returned no row")
    return row


def columns(record: type[Any], *, prefix: str = "", computed: Mapping[str, str] | None = None) -> str:
    """A record's SELECT list, derived from its dataclass so a column is declared once: each field as
    `prefix + name`, or, for a field in `computed`, that SQL `AS name`."""
    derived = computed or {}
    return ", ".join(
        f"{derived[field.name]} AS {field.name}" if field.name in derived else f"{prefix}{field.name}"
        for field in fields(record)
    )

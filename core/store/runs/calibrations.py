"""Confidence calibrations by chat model and embedding model (migration 0021): written by `studyai
calibrate` on any machine, read by every API and worker process (core/confidence/source.py)."""

from typing import Any

from psycopg.rows import scalar_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection
from core.store.sql.rows import fetch_one


async def stored_calibration(
    conn: Connection, chat_model: str, embedding_model: str
) -> dict[str, Any] | None:
    return await fetch_one(
        conn,
        scalar_row,
        "SELECT calibration FROM confidence_calibrations WHERE chat_model = %s AND embedding_model = %s",
        (chat_model, embedding_model),
    )


async def store_calibration(
    conn: Connection, chat_model: str, embedding_model: str, value: dict[str, Any]
) -> None:
    """Replaces the pair's calibration (a refit supersedes the one before)."""
    await conn.execute(
        "INSERT INTO confidence_calibrations (chat_model, embedding_model, calibration)"
        " VALUES (%s, %s, %s) ON CONFLICT (chat_model, embedding_model)"
        " DO UPDATE SET calibration = EXCLUDED.calibration, fitted_at = now()",
        (chat_model, embedding_model, Jsonb(value)),
    )

"""The words read off a page of a stored version (migration 0023), kept so a cited page is OCR'd once, not
once per reader. Read and written only within the caller's projects, in the SQL: a row is written only for
a version of a document of a project the caller is a member of."""

from typing import Any
from uuid import UUID

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from core.store.sql.access import Connection, in_project, scope
from core.store.sql.rows import fetch_one
from core.text.page_words import PageWords, words_from_json


async def kept_words(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID, version: int, page: int
) -> PageWords | None:
    row = await fetch_one(
        conn,
        dict_row,
        "SELECT w.page, w.source, w.words FROM page_words w"
        " WHERE w.document_id = %(document_id)s AND w.version = %(version)s AND w.page = %(page)s"
        f" AND {in_project('w')}",
        scope(project_id, user_id, document_id=document_id, version=version, page=page),
    )
    if row is None:
        return None
    return PageWords(page=row["page"], source=row["source"], words=words_from_json(row["words"]))


async def keep_words(
    conn: Connection, *, project_id: UUID, user_id: UUID, document_id: UUID, version: int, words: PageWords
) -> None:
    """Kept once: a second reader who read the same page meanwhile leaves the first row."""
    stored: list[dict[str, Any]] = [
        {"x0": w.x0, "y0": w.y0, "x1": w.x1, "y1": w.y1, "text": w.text, "line": w.line} for w in words.words
    ]
    await conn.execute(
        "INSERT INTO page_words (project_id, document_id, version, page, source, words)"
        " SELECT v.project_id, v.document_id, v.version, %(page)s, %(source)s, %(words)s"
        " FROM document_versions v"
        f" WHERE v.document_id = %(document_id)s AND v.version = %(version)s AND {in_project('v')}"
        " ON CONFLICT (document_id, version, page) DO NOTHING",
        scope(
            project_id, user_id, document_id=document_id, version=version, page=words.page,
            source=words.source, words=Jsonb(stored),
        ),
    )  # fmt: skip

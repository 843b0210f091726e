"""Chunks: membership-scoped listing for the API, and the worker's atomic replace."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict, Unpack
from uuid import UUID

import numpy as np
from psycopg.rows import class_row

from core.store.sql.access import Connection, in_project, scope
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all


@dataclass(frozen=True, slots=True)
class ChunkColumns:
    """A stored chunk's own columns but its embedding: what the API lists and what questions are
    generated from share them."""

    id: int
    document_id: UUID
    document_version: int
    ordinal: int
    text: str
    context_header: str
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class Chunk(ChunkColumns):
    """A stored chunk as the API lists it (no embedding)."""

    embedding_model: str


_COLUMNS = columns(Chunk, prefix="c.")


@dataclass(frozen=True, slots=True)
class _StoredEmbedding:
    content_hash: str
    embedding: np.ndarray


@dataclass(frozen=True)
class ChunkRow:
    ordinal: int
    text: str
    context_header: str
    section_path: Sequence[str]
    page_start: int | None
    page_end: int | None
    char_start: int
    char_end: int
    content_hash: str
    embedding: np.ndarray


async def list_chunks(
    conn: Connection,
    *,
    project_id: UUID,
    user_id: UUID,
    document_id: UUID,
    page: Page,
) -> list[Chunk]:
    return await fetch_all(
        conn,
        class_row(Chunk),
        f"SELECT {_COLUMNS} FROM chunks c WHERE {in_project('c')} AND c.document_id = %(document_id)s"
        " ORDER BY c.ordinal LIMIT %(limit)s OFFSET %(offset)s",
        scope(project_id, user_id, document_id=document_id, **page),
    )


async def stored_embeddings(
    conn: Connection, *, project_id: UUID, document_id: UUID, embedding_model: str
) -> dict[str, np.ndarray]:
    """Vectors already computed for this document, by content hash: reindex embeds only what is new."""
    rows = await fetch_all(
        conn,
        class_row(_StoredEmbedding),
        "SELECT DISTINCT ON (content_hash) content_hash, embedding FROM chunks"
        " WHERE project_id = %(project_id)s AND document_id = %(document_id)s"
        " AND embedding_model = %(model)s",
        {"project_id": project_id, "document_id": document_id, "model": embedding_model},
    )
    return {row.content_hash: row.embedding for row in rows}


class ChunkSet(TypedDict):
    """A document version's whole set of chunks, as the worker writes it."""

    project_id: UUID
    document_id: UUID
    version: int
    chunks: Sequence[ChunkRow]
    embedding_model: str
    ts_config: str


async def replace_chunks(conn: Connection, **chunk_set: Unpack[ChunkSet]) -> None:
    """Caller holds the transaction (and the document row lock): old set out, new set in, atomically."""
    await conn.execute(
        "DELETE FROM chunks WHERE project_id = %(project_id)s AND document_id = %(document_id)s",
        {"project_id": chunk_set["project_id"], "document_id": chunk_set["document_id"]},
    )
    await insert_chunks(conn, **chunk_set)


_COPY = (
    "COPY chunks (project_id, document_id, document_version, ordinal, text, context_header, section_path,"
    " page_start, page_end, char_start, char_end, content_hash, embedding_model, embedding, ts_config)"
    " FROM STDIN"
)


async def insert_chunks(conn: Connection, **chunk_set: Unpack[ChunkSet]) -> None:
    """COPY rather than INSERTs: one statement (so the stats trigger fires once) and far fewer
    round trips for a 500-chunk book."""
    document = (chunk_set["project_id"], chunk_set["document_id"], chunk_set["version"])
    model, ts_config = chunk_set["embedding_model"], chunk_set["ts_config"]
    async with conn.cursor() as cur, cur.copy(_COPY) as copy:
        for chunk in chunk_set["chunks"]:
            await copy.write_row(
                (
                    *document,
                    chunk.ordinal,
                    chunk.text,
                    chunk.context_header,
                    list(chunk.section_path),
                    chunk.page_start,
                    chunk.page_end,
                    chunk.char_start,
                    chunk.char_end,
                    chunk.content_hash,
                    model,
                    chunk.embedding,
                    ts_config,
                )
            )

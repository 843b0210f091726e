"""Users, projects and documents written straight to the store, for tests that run a job in-process
(no API, no queue)."""

import hashlib
import uuid
from pathlib import PurePath
from typing import Any
from uuid import UUID

import psycopg

from core.store.accounts import accounts, projects
from core.store.content import documents

Conn = psycopg.AsyncConnection[Any]


async def owned_project(conn: Conn, who: str, name: str = "p") -> tuple[accounts.Account, projects.Project]:
    """A new user (email `who-<uuid>@example.org`) and an English project of theirs."""
    user = await accounts.ensure_account(conn, email=f"{who}-{uuid.uuid4()}@example.org")
    project = await projects.create_project(conn, user_id=user.id, name=name, description="", language="en")
    return user, project


async def uploaded_document(
    conn: Conn,
    project_id: UUID | str,
    user_id: UUID,
    filename: str,
    content: bytes,
    *,
    title: str | None = None,
) -> documents.Document:
    """An uploaded Markdown document (titled by its file name unless `title` says otherwise), stored as
    the upload route stores it, with no index job queued."""
    document = await documents.create_document(
        conn,
        project_id=UUID(str(project_id)),
        user_id=user_id,
        title=title or PurePath(filename).stem,
        filename=filename,
        source_type="markdown",
        kind="uploaded",
        content=content,
        content_hash=hashlib.sha256(content).hexdigest(),
    )
    assert document is not None
    return document

"""The index job itself: transient failures retry, then fail with a reason; the same job id runs once."""

from pathlib import Path

import psycopg
import pytest
from arq import Retry
from psycopg.rows import dict_row

from core.jobs.specs import IndexDocument
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.content import documents
from tests.stored import owned_project, uploaded_document
from tests.workers.runtime import job_runtime
from workers.jobs.index import index_document


class UnreachableEmbeddings:
    """Stands in for a hosted embedding API that is down."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embedding service unreachable")

    def embed_query(self, text: str) -> list[float]:
        raise ConnectionError("embedding service unreachable")


@pytest.fixture
async def queued_document(services: ServiceUrls) -> documents.Document:
    async with await psycopg.AsyncConnection.connect(
        services.database_url, autocommit=True, row_factory=dict_row
    ) as conn:
        user, project = await owned_project(conn, "job")
        document = await uploaded_document(
            conn, project.id, user.id, "notes.md", b"# Notes\n\nSome text to embed.\n"
        )
        return document


async def test_transient_failure_retries_then_fails_clearly(
    settings: Settings, services: ServiceUrls, queued_document: documents.Document, tmp_path: Path
) -> None:
    args = IndexDocument(queued_document.project_id, queued_document.id, 1)
    async with job_runtime(settings, services, embeddings=UnreachableEmbeddings()) as runtime:
        with pytest.raises(Retry):
            await index_document(runtime, args, job_try=1)
        result = await index_document(runtime, args, job_try=settings.workers.job_max_tries)
        assert result["status"] == "failed"
        async with runtime.pool.connection() as conn:
            job = await (
                await conn.execute("SELECT * FROM jobs WHERE document_id = %s", (args.document_id,))
            ).fetchone()
            document = await (
                await conn.execute("SELECT * FROM documents WHERE id = %s", (args.document_id,))
            ).fetchone()
        assert job["status"] == "failed"
        assert job["attempts"] == 2
        assert "unavailable" in job["error"]
        assert document["status"] == "failed"

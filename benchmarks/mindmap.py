"""How long the mind map takes to build (backend/mindmap/service.py, as its routes call it), indexing left
out, for real books: the Rust book's chapters (Markdown, a document each), Pense em Python's chapters
(Markdown, Portuguese) and Think Python's 288-page PDF (one document: the node cap's case). The books are
parsed and chunked by the worker's own code and stored with zero vectors (the map reads none), in an
embedded Postgres of the script's own; each map is then built `--runs` times on one connection, and the
median and slowest printed with its node count.

    .venv/bin/python -m benchmarks.mindmap [--runs 20]
"""

import argparse
import asyncio
import hashlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from uuid import UUID

import numpy as np
import psycopg
from pgvector.psycopg import register_vector_async

from backend.mindmap import service
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import accounts, projects
from core.store.content import chunks, document_index, documents
from core.store.sql.access import ProjectScope
from core.store.sql.migrations import apply_migrations
from workers.chunking.sections import ChunkDraft, chunk_document
from workers.parsing import parse_document

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
BOOKS = {
    "Rust book chapters": ("en", sorted((DATA / "rust-book" / "src").glob("[ca][hp]*.md"))),
    "Pense em Python": ("pt", sorted((DATA / "pense-python").glob("[0-9ABC]*.md"))),
    "Think Python PDF (288 pages)": ("en", [DATA / "thinkpython2" / "thinkpython2.pdf"]),
}
ZERO = np.zeros(384, dtype=np.float32)


async def store_book(
    conn: psycopg.AsyncConnection, user_id: UUID, name: str, language: str, files: list[Path]
) -> tuple[ProjectScope, int]:
    project = await projects.create_project(
        conn, user_id=user_id, name=name, description="", language=language
    )
    scope = ProjectScope(project_id=project.id, user_id=user_id)
    total = 0
    for path in files:
        source_type = "pdf" if path.suffix == ".pdf" else "markdown"
        content = path.read_bytes()
        document = await documents.create_document(
            conn, **scope, title=path.stem, filename=path.name, source_type=source_type, kind="uploaded",
            content=content, content_hash=hashlib.sha256(content).hexdigest(),
        )  # fmt: skip
        assert document is not None
        drafts = chunk_document(
            parse_document(content, source_type=source_type, filename=path.name, title=path.stem)
        )
        rows = [chunks.ChunkRow(**_fields(draft), embedding=ZERO) for draft in drafts]
        async with conn.transaction():
            await chunks.replace_chunks(
                conn, project_id=project.id, document_id=document.id, version=1, chunks=rows,
                embedding_model="benchmark-zero", ts_config="portuguese" if language == "pt" else "english",
            )  # fmt: skip
            await document_index.mark_ready(
                conn, project_id=project.id, document_id=document.id, version=1, language=language,
                warnings=[], page_count=None,
            )  # fmt: skip
        total += len(rows)
    return scope, total


def _fields(draft: ChunkDraft) -> dict[str, object]:
    return {
        name: getattr(draft, name) for name in chunks.ChunkRow.__dataclass_fields__ if name != "embedding"
    }


def figures(times: list[float]) -> str:
    return f"median {statistics.median(times):.1f} ms, slowest {max(times):.1f} ms"


async def measure(database_url: str, runs: int) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        await register_vector_async(conn)
        user = await accounts.ensure_account(conn, email="mindmap-benchmark@example.org")
        for name, (language, files) in BOOKS.items():
            scope, total = await store_book(conn, user.id, name, language, files)
            times, found = [], None
            for _ in range(runs + 1):  # the first run warms the connection's statement cache
                started = time.perf_counter()
                found = await service.project_map(conn, scope, project_name=name)
                times.append((time.perf_counter() - started) * 1000)
            assert found is not None
            shape = (
                f"{found.depth} heading levels shown, folded: {found.folded}, concepts: {found.concepts_from}"
            )
            print(
                f"{name}: {len(files)} documents, {total} chunks -> project map of {len(found.nodes)} nodes"
                f" ({shape}); {figures(times[1:])}"
            )
            largest = max((n for n in found.nodes if n.kind == "document"), key=lambda n: n.chunk_count)
            assert largest.document_id is not None
            times = []
            for _ in range(runs + 1):
                started = time.perf_counter()
                one = await service.document_map(conn, scope, document_id=largest.document_id)
                times.append((time.perf_counter() - started) * 1000)
            size = f"{largest.chunk_count} chunks"
            print(f"  its largest document ({size}): {len(one.nodes)} nodes; {figures(times[1:])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mindmap-bench-"))
    os.chmod(workdir, 0o755)  # the embedded server runs as its own user when we are root
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=workdir, DATABASE_URL=None, REDIS_URL=None)  # type: ignore[call-arg]
    try:
        with EmbeddedServices(settings, redis=False) as urls:
            apply_migrations(urls.database_url)
            asyncio.run(measure(urls.database_url, args.runs))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

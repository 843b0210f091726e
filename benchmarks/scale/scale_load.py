"""The scale benchmark's bulk load: the synthetic corpus (scale_data.py) COPYed in binary into the
embedded Postgres with the HNSW and GIN indexes dropped, then the indexes rebuilt and timed."""

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import psycopg
from pgvector.psycopg import register_vector

from benchmarks.scale.scale_data import TS_CONFIG, Corpus, DocumentPlan, content_hash, plan_documents
from core.observability import timing

EMBEDDING_MODEL = "scale-synthetic"
# Dropped before the bulk load and rebuilt after it: building once is far cheaper than maintaining
# an HNSW graph and a GIN index row by row.
REBUILT_INDEXES = ("chunks_embedding_idx", "chunks_tsv_idx")
STATS_TRIGGERS = ("chunks_stats_insert", "chunks_lexemes_insert")
_COPY_CHUNKS = (
    "COPY chunks (project_id, document_id, document_version, ordinal, text, context_header, section_path,"
    " char_start, char_end, content_hash, embedding_model, embedding, ts_config) FROM STDIN (FORMAT BINARY)"
)
# regconfig travels as its oid in binary COPY (regconfigsend is oidsend).
_COPY_TYPES = ["uuid", "uuid", "int4", "int4", "text", "text", "text[]", "int4", "int4", "text", "text",
               "vector", "oid"]  # fmt: skip


@dataclass
class LoadReport:
    chunks: int
    projects: int
    documents: int
    generate_copy_s: float
    stats_s: float
    index_build_s: dict[str, float]
    vacuum_analyze_s: float
    sizes: dict[str, int] = field(default_factory=dict)
    vector_storage: str = "default"


def load(
    database_url: str,
    corpus: Corpus,
    *,
    batch_rows: int = 20_000,
    tune_server: bool = True,
    vector_storage: str = "default",
    log: bool = True,
) -> LoadReport:
    plans = plan_documents(corpus.spec, corpus.sizes)
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_vector(conn)
        if tune_server:
            _tune_server_for_load(conn)
        if vector_storage not in ("default", "plain", "main"):
            raise ValueError(f"unknown vector storage {vector_storage!r}")
        if vector_storage != "default":
            # An experiment, not the schema: pgvector's 'external' storage moves a 1.5 kB vector out of
            # line as soon as text + tsv + vector pass ~2 kB, so every exact distance reads TOAST.
            conn.execute(f"ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE {vector_storage.upper()}")
        definitions = _drop_indexes(conn, REBUILT_INDEXES)
        for trigger in STATS_TRIGGERS:  # filled once in bulk after the copy, as the migrations would
            conn.execute(f"ALTER TABLE chunks DISABLE TRIGGER {trigger}")
        project_ids, document_ids = _create_rows(conn, corpus, plans)
        started = timing.mark()
        _copy_chunks(conn, corpus, plans, project_ids, document_ids, batch_rows=batch_rows, log=log)
        copy_s = timing.elapsed_s(started)
        started = timing.mark()
        _fill_stats(conn)
        for trigger in STATS_TRIGGERS:
            conn.execute(f"ALTER TABLE chunks ENABLE TRIGGER {trigger}")
        stats_s = timing.elapsed_s(started)
        builds = {name: _build_index(conn, sql, log=log) for name, sql in definitions.items()}
        started = timing.mark()
        conn.execute("VACUUM (ANALYZE) chunks")
        conn.execute("ANALYZE")
        conn.execute("CHECKPOINT")
        vacuum_s = timing.elapsed_s(started)
        report = LoadReport(
            chunks=int(corpus.sizes.sum()),
            projects=len(project_ids),
            documents=len(plans),
            generate_copy_s=copy_s,
            stats_s=stats_s,
            index_build_s=builds,
            vacuum_analyze_s=vacuum_s,
            sizes=relation_sizes(conn),
            vector_storage=vector_storage,
        )
    return report


def _tune_server_for_load(conn: psycopg.Connection) -> None:
    """Fewer checkpoints while a few GB arrive; the benchmark's own data dir, so ALTER SYSTEM is fine."""
    conn.execute("ALTER SYSTEM SET max_wal_size = '16GB'")
    conn.execute("ALTER SYSTEM SET checkpoint_timeout = '30min'")
    conn.execute("SELECT pg_reload_conf()")
    conn.execute("SET synchronous_commit = off")


def _drop_indexes(conn: psycopg.Connection, names: Sequence[str]) -> dict[str, str]:
    """Returns each index's CREATE statement as the migrations left it, to rebuild it identically."""
    rows = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'chunks' AND indexname = ANY(%s)",
        (list(names),),
    ).fetchall()
    for name, _ in rows:
        conn.execute(psycopg.sql.SQL("DROP INDEX {}").format(psycopg.sql.Identifier(name)))
    return dict(rows)


def _create_rows(
    conn: psycopg.Connection, corpus: Corpus, plans: Sequence[DocumentPlan]
) -> tuple[list[UUID], dict[tuple[int, int], UUID]]:
    user_id = uuid4()
    project_ids = [uuid4() for _ in range(len(corpus.sizes))]
    document_ids = {(p.project, p.document): uuid4() for p in plans}
    with conn.transaction(), conn.cursor() as cur:
        email = f"scale-{user_id}@example.org"
        cur.execute("INSERT INTO users (id, email) VALUES (%s, %s)", (user_id, email))
        with cur.copy("COPY projects (id, name, language, created_by) FROM STDIN") as copy:
            for index, project_id in enumerate(project_ids):
                copy.write_row((project_id, project_name(index), "en", user_id))
        with cur.copy("COPY project_members (project_id, user_id, role) FROM STDIN") as copy:
            for project_id in project_ids:
                copy.write_row((project_id, user_id, "owner"))
        with cur.copy(
            "COPY documents (id, project_id, title, filename, source_type, language, version,"
            " indexed_version, status, created_by) FROM STDIN"
        ) as copy:
            for (project, document), document_id in document_ids.items():
                copy.write_row(
                    (document_id, project_ids[project], f"Document {document}", f"doc-{document}.md",
                     "markdown", "en", 1, 1, "ready", user_id)
                )  # fmt: skip
    return project_ids, document_ids


def project_name(index: int) -> str:
    return f"scale-{index:05d}"


def project_index(name: str) -> int:
    return int(name.removeprefix("scale-"))


def _copy_chunks(
    conn: psycopg.Connection,
    corpus: Corpus,
    plans: Sequence[DocumentPlan],
    project_ids: Sequence[UUID],
    document_ids: dict[tuple[int, int], UUID],
    *,
    batch_rows: int,
    log: bool,
) -> None:
    """One COPY per batch of whole documents; each batch commits, so a crash loses one batch only."""
    ts_oid = conn.execute("SELECT %s::regconfig::oid", (TS_CONFIG,)).fetchone()[0]  # type: ignore[index]
    total = sum(p.size for p in plans)
    done = 0
    started = timing.mark()
    for batch in _batches(plans, batch_rows):
        with conn.transaction(), conn.cursor() as cur, cur.copy(_COPY_CHUNKS) as copy:
            copy.set_types(_COPY_TYPES)
            for plan in batch:
                for row in _chunk_rows(corpus, plan, project_ids, document_ids, ts_oid):
                    copy.write_row(row)
        done += sum(p.size for p in batch)
        if log:
            rate = done / timing.elapsed_s(started)
            print(f"  copied {done:,}/{total:,} chunks ({rate:,.0f}/s)", flush=True)


def _batches(plans: Sequence[DocumentPlan], rows: int) -> Iterator[list[DocumentPlan]]:
    batch: list[DocumentPlan] = []
    size = 0
    for plan in plans:
        batch.append(plan)
        size += plan.size
        if size >= rows:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _chunk_rows(
    corpus: Corpus,
    plan: DocumentPlan,
    project_ids: Sequence[UUID],
    document_ids: dict[tuple[int, int], UUID],
    ts_oid: int,
) -> Iterator[tuple[Any, ...]]:
    data = corpus.document(plan)
    project_id = project_ids[plan.project]
    document_id = document_ids[(plan.project, plan.document)]
    offset = 0
    for ordinal, (text, vector, topic) in enumerate(zip(data.texts, data.vectors, data.topics, strict=True)):
        # The topic goes in section_path, so the query phase can aim a query at a chunk's topic.
        yield (project_id, document_id, 1, ordinal, text, data.title, [f"t{topic}"], offset,
               offset + len(text), content_hash(text), EMBEDDING_MODEL, vector, ts_oid)  # fmt: skip
        offset += len(text) + 1


def _fill_stats(conn: psycopg.Connection) -> None:
    conn.execute("DELETE FROM project_chunk_stats")
    conn.execute(
        "INSERT INTO project_chunk_stats (project_id, ts_config, chunk_count, total_len)"
        " SELECT project_id, ts_config, count(*), coalesce(sum(lex_len), 0) FROM chunks GROUP BY 1, 2"
    )
    conn.execute("DELETE FROM project_lexeme_stats")
    conn.execute(
        "INSERT INTO project_lexeme_stats (project_id, ts_config, lexeme, df)"
        " SELECT c.project_id, c.ts_config, u.lexeme, count(*)"
        " FROM chunks c, unnest(c.tsv) u GROUP BY 1, 2, 3"
    )


def _build_index(conn: psycopg.Connection, definition: str, *, log: bool) -> float:
    """Big maintenance_work_mem so the whole HNSW graph is built in memory (pgvector slows down by
    an order of magnitude once it spills), and the second core as a parallel worker."""
    conn.execute("SET maintenance_work_mem = '8GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {max(1, (os.cpu_count() or 2) - 1)}")
    started = timing.mark()
    conn.execute(definition)  # type: ignore[arg-type]  # from pg_indexes, written by our migrations
    seconds = timing.elapsed_s(started)
    if log:
        print(f"  built in {seconds:.1f} s: {definition}", flush=True)
    return seconds


def reindex_hnsw(database_url: str, options: str) -> tuple[str, float]:
    """Rebuilds the HNSW index, with WITH (options) or, given '', exactly as the migrations define it."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        migrated = (
            "CREATE INDEX chunks_embedding_idx ON public.chunks USING hnsw (embedding vector_cosine_ops)"
        )
        definition = f"{migrated} WITH ({options})" if options else migrated
        conn.execute("DROP INDEX IF EXISTS chunks_embedding_idx")
        seconds = _build_index(conn, definition, log=True)
        conn.execute("CHECKPOINT")
    return definition, seconds


def relation_sizes(conn: psycopg.Connection) -> dict[str, int]:
    rows = conn.execute(
        "SELECT 'chunks (heap + toast + all indexes)', pg_total_relation_size('chunks')"
        " UNION ALL SELECT 'chunks heap', pg_relation_size('chunks')"
        " UNION ALL SELECT 'chunks toast', coalesce(pg_total_relation_size(reltoastrelid), 0)"
        "   FROM pg_class WHERE oid = 'chunks'::regclass"
        " UNION ALL SELECT indexname, pg_relation_size(indexname::regclass) FROM pg_indexes"
        "   WHERE tablename = 'chunks'"
        " UNION ALL SELECT 'database', pg_database_size(current_database())"
    ).fetchall()
    return {name: int(size) for name, size in rows}

"""`studyai backup` and `studyai restore` timed on an instance of a school's size, while it is written to.

Builds an instance in `--workdir` (once; reused): documents of incompressible bytes (like PDFs) and their
chunks (the rust book's paragraphs with random unit vectors, as an index would store them). Holds its
embedded Postgres as `studyai up` does, and runs `studyai backup` while a writer inserts query history
rows, then `studyai restore` into a fresh data directory (which checks every table's row count against
the manifest, so a backup that was not one snapshot fails here). Writes benchmarks/reports/backup.md.

    python benchmarks/faults/backup_restore.py --workdir /tmp/backup-bench [--documents 200] [--chunks 100]
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import report_path, write_report
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql.migrations import apply_migrations

REPO_ROOT = Path(__file__).resolve().parents[2]
RUST = REPO_ROOT.parent / "shared" / "data" / "rust-book" / "src"
REPORT = report_path("backup")
MODEL = "e5-small-enpt-onnx-int8"


def build(database_url: str, documents: int, per_document: int) -> None:
    paragraphs = [p for f in sorted(RUST.glob("ch*.md")) for p in f.read_text().split("\n\n") if len(p) > 200]
    rng = np.random.default_rng(1)
    with psycopg.connect(database_url) as conn:
        user = conn.execute(
            "INSERT INTO users (email) VALUES ('teacher@school.example') RETURNING id"
        ).fetchone()
        project = conn.execute(
            "INSERT INTO projects (name, created_by, language) VALUES ('term', %s, 'en') RETURNING id", user
        ).fetchone()
        assert user and project
        conn.execute("INSERT INTO project_members VALUES (%s, %s, 'owner')", (project[0], user[0]))
        for d in range(documents):
            content = os.urandom(256 * 1024)
            document = conn.execute(
                "INSERT INTO documents (project_id, title, filename, source_type, created_by, status,"
                " indexed_version) VALUES (%s, %s, %s, 'pdf', %s, 'ready', 1) RETURNING id",
                (project[0], f"doc {d}", f"doc{d}.pdf", user[0]),
            ).fetchone()
            assert document
            conn.execute(
                "INSERT INTO document_versions (project_id, document_id, version, content, content_hash,"
                " size_bytes, filename, created_by) VALUES (%s, %s, 1, %s, %s, %s, %s, %s)",
                (project[0], document[0], content, hashlib.sha256(content).hexdigest(), len(content),
                 f"doc{d}.pdf", user[0]),
            )  # fmt: skip
            vectors = rng.normal(size=(per_document, 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            columns = "project_id, document_id, document_version, ordinal, text, char_start, char_end,"
            columns += " content_hash, embedding_model, embedding, ts_config"
            with conn.cursor().copy(f"COPY chunks ({columns}) FROM STDIN") as copy:
                for i, vector in enumerate(vectors):
                    text = paragraphs[(d * per_document + i) % len(paragraphs)]
                    embedding = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
                    digest = hashlib.sha256(text.encode()).hexdigest()
                    copy.write_row(
                        (
                            project[0],
                            document[0],
                            1,
                            i,
                            text,
                            0,
                            len(text),
                            digest,
                            MODEL,
                            embedding,
                            "english",
                        )
                    )
            conn.commit()


def write_history(database_url: str, stop: threading.Event) -> None:
    """Students asking while the backup runs: one query history row after another."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT project_id, user_id FROM project_members LIMIT 1").fetchone()
        while not stop.is_set():
            conn.execute(
                "INSERT INTO query_history (project_id, user_id, agent, question) VALUES (%s, %s, 'qa', 'q')",
                row,
            )


def studyai(data_dir: Path, *args: str) -> tuple[float, str]:
    env = {**os.environ, "STUDYAI_DATA_DIR": str(data_dir)}
    env.pop("DATABASE_URL", None)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "backend.cli.app", *args], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"studyai {' '.join(args)} failed: {done.stderr}")
    return time.monotonic() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=100, help="chunks per document")
    options = parser.parse_args()
    source, target = options.workdir / "source", options.workdir / "restored"
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=source, DATABASE_URL=None)  # type: ignore[call-arg]
    with EmbeddedServices(settings, redis=False) as urls:  # held, as `studyai up` holds it
        apply_migrations(urls.database_url)
        with psycopg.connect(urls.database_url) as conn:
            if conn.execute("SELECT count(*) FROM documents").fetchone() == (0,):
                build(urls.database_url, options.documents, options.chunks)
            size = conn.execute("SELECT pg_size_pretty(pg_database_size(current_database()))").fetchone()
        stop = threading.Event()
        writer = threading.Thread(target=write_history, args=(urls.database_url, stop))
        writer.start()
        backup = options.workdir / f"backup-{time.time_ns()}.tar"
        backup_s, backup_out = studyai(source, "backup", str(backup))
        stop.set()
        writer.join()
    shutil.rmtree(target, ignore_errors=True)
    restore_s, restore_out = studyai(target, "restore", str(backup))
    with tarfile.open(backup) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    lines = [
        "# Backup and restore timings",
        "",
        f"`python benchmarks/faults/backup_restore.py --workdir DIR --documents {options.documents} --chunks"
        f" {options.chunks}`: a {size[0] if size else '?'} database, {manifest['tables']['chunks']} chunks,"
        f" backed up while a writer inserted query history rows ({manifest['tables']['query_history']} in"
        " the backup's snapshot), restored into a fresh data directory (row counts checked against it).",
        "",
        f"- `studyai backup`: {backup_s:.1f} s in all (Python start-up and attaching included);"
        f" its own report: {backup_out.splitlines()[0]}",
        f"- `studyai restore`: {restore_s:.1f} s in all (a fresh embedded Postgres initialised);"
        f" its own report: {restore_out.splitlines()[0]}",
        "",
    ]
    write_report(REPORT, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()

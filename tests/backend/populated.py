"""A populated instance of a test's own for the backup tests (tests/backend/test_backup.py): documents
indexed by a real worker, a QA thread and history, an attempt, a review schedule and keys, put in through
the API where the API writes them and by SQL where a model would (a QA answer)."""

from dataclasses import dataclass
from pathlib import Path
from typing import cast
from uuid import UUID

import psycopg
from langchain_core.language_models import FakeMessagesListChatModel
from psycopg import sql
from psycopg.types.json import Jsonb

from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts, api_keys
from core.store.study import questions
from tests.bank import draft, unit_vector
from tests.conftest import (
    SHARED_DATA,
    Caller,
    add_member,
    change_runtime,
    create_project,
    index_documents,
    own_app,
)

CHAPTERS = ("ch07-01-packages-and-crates.md", "ch06-03-if-let.md")


def instance_settings(data_dir: Path) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, STUDYAI_DATA_DIR=data_dir, DATABASE_URL=None, REDIS_URL=None, LLM_BASE_URL=None,
        RATE_LIMIT_ENABLED=False,
    )  # fmt: skip


@dataclass
class Instance:
    settings: Settings
    urls: ServiceUrls

    @property
    def data_dir(self) -> Path:
        return self.settings.services.data_dir

    def digests(self) -> dict[str, tuple[int, str]]:
        """Every table's row count and the md5 of its rows (as text, in order)."""
        with psycopg.connect(self.urls.database_url) as conn:
            tables = [
                row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
            ]
            query = (
                "SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM {} t"
            )
            return {
                table: cast(
                    tuple[int, str], conn.execute(sql.SQL(query).format(sql.Identifier(table))).fetchone()
                )
                for table in sorted(tables)
            }


@dataclass
class Source(Instance):
    project_id: UUID
    keys: dict[str, UUID]  # a live key -> its user
    revoked_key: str
    backup: Path
    backup_output: str
    scheduled: Path  # the worker's BACKUP_DIR


async def populate(settings: Settings, urls: ServiceUrls) -> tuple[UUID, dict[str, UUID], str]:
    async with own_app(settings, urls) as (app, http):
        change_runtime(app, llm=FakeMessagesListChatModel(responses=[]))  # exact grading needs no model
        async with app.state.runtime.pool.connection() as conn:
            teacher = await accounts.ensure_account(conn, email="teacher@school.example")
            student = await accounts.ensure_account(conn, email="student@school.example")
            keys = {
                await api_keys.create_api_key(conn, user_id=user.id): user.id for user in (teacher, student)
            }
            revoked, row = await api_keys.create_api_key_row(conn, user_id=student.id, name="old laptop")
            await conn.execute("UPDATE api_keys SET revoked_at = now() WHERE id = %s", (row.id,))
        as_teacher, as_student = ({"Authorization": f"Bearer {key}"} for key in keys)
        project_id = await create_project(http, as_teacher, name="Rust", language="en")
        [student_key] = [key for key, user_id in keys.items() if user_id == student.id]
        await add_member(
            http, as_teacher, project_id, Caller(student_key, student.email, student.id), "viewer"
        )
        texts = {name: (SHARED_DATA / "rust-book" / "src" / name).read_text() for name in CHAPTERS}
        await index_documents(http, as_teacher, project_id, texts)
        async with app.state.runtime.pool.connection() as conn:
            row = await (await conn.execute("SELECT min(id) AS id FROM chunks")).fetchone()  # dict rows
            chunk_id = row["id"]
            item = draft(
                "What does a package contain?", "Crates", unit_vector(7), type="multiple_choice",
                distractors=["Modules only", "Nothing", "Binaries only"], source_chunk_ids=[chunk_id],
            )  # fmt: skip
            stored = await questions.insert_question(
                conn,
                project_id=UUID(project_id),
                user_id=teacher.id,
                question=item,
                duplicate_similarity=0.99,
            )
            assert stored is not None
            await conn.execute("UPDATE questions SET review_state = 'approved' WHERE id = %s", (stored.id,))
            thread = await (
                await conn.execute(
                    "INSERT INTO qa_threads (project_id, user_id, title) VALUES (%s, %s, 'crates')"
                    " RETURNING id",
                    (project_id, student.id),
                )
            ).fetchone()
            for kind, text in (("human", "What is a crate?"), ("ai", "The smallest unit Cargo compiles.")):
                await conn.execute(
                    "INSERT INTO qa_messages (session_id, message) VALUES (%s, %s)",
                    (thread["id"], Jsonb({"type": kind, "data": {"content": text}})),
                )
            await conn.execute(
                "INSERT INTO query_history (project_id, user_id, agent, question, answer, outcome,"
                " retrieved_chunk_ids) VALUES (%s, %s, 'qa', 'What is a crate?', 'A unit', 'answered', %s)",
                (project_id, student.id, [chunk_id]),
            )
        url = f"/projects/{project_id}"
        attempt = await http.post(
            f"{url}/questions/{stored.id}/attempts", json={"answer": "Crates"}, headers=as_student
        )
        assert attempt.status_code == 201, attempt.text
        review = await http.post(
            f"{url}/study/reviews", json={"question_id": str(stored.id), "rating": 3}, headers=as_student
        )
        assert review.status_code == 201, review.text
    return UUID(project_id), keys, revoked

"""Who sees which of the bank's questions, shared by the question and attempt routes: students only the
items they may study (questions.studyable, in the SQL); editors and owners the whole bank, unlimited."""

from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from agents.runs.attempts import Attempter
from backend.deps import ProjectAccess
from core.errors import NotFound
from core.store.study import questions
from core.store.study.questions import Question


def is_editor(access: ProjectAccess) -> bool:
    return access.role in ("owner", "editor")


def question_not_found() -> NotFound:
    return NotFound("Question not found.")


async def visible_question(db: AsyncConnectionPool, access: ProjectAccess, question_id: UUID) -> Question:
    studying = not is_editor(access)
    async with db.connection() as conn:
        row = await questions.get_question(conn, **access.scope, question_id=question_id, studying=studying)
    if row is None:
        raise question_not_found()
    return row


def attempter(access: ProjectAccess) -> Attempter:
    """The project's attempt limit holds for students; editors and owners see answers, unlimited."""
    editor = is_editor(access)
    return Attempter(editor=editor, limit=None if editor else access.project.max_attempts_per_question)

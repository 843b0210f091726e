"""The approved items of a project as exports read them, with where each comes from (document title,
section path, pages of its source chunks). Scoped by membership in SQL like every API query."""

from dataclasses import dataclass
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import class_row

from core.store.sql.access import in_project, scope
from core.store.sql.rows import fetch_all
from core.store.study.questions import COLUMNS, Question


@dataclass(frozen=True, slots=True)
class ApprovedItem(Question):
    """An approved item with its document's title (None once deleted) and its source chunks' pages."""

    document_title: str | None
    page_start: int | None
    page_end: int | None


# Approved, in the bank and not flagged: what a teacher vouched for and still stands. Pages come from
# the item's live source chunks (a reindex carries them over; see core/store/study/item_sources.py).
_APPROVED = f"""
SELECT {COLUMNS}, d.title AS document_title, src.page_start, src.page_end
FROM questions q
LEFT JOIN documents d ON d.project_id = q.project_id AND d.id = q.document_id
LEFT JOIN LATERAL (
    SELECT min(c.page_start) AS page_start, max(coalesce(c.page_end, c.page_start)) AS page_end
    FROM chunks c WHERE c.project_id = q.project_id AND c.id = ANY(q.source_chunk_ids)
) src ON true
WHERE {in_project("q")}
  AND q.review_state = 'approved' AND q.status <> 'archived' AND q.flag IS NULL
  AND (%(questions)s OR q.type = 'flashcard')
ORDER BY q.created_at, q.id
LIMIT %(limit)s
"""


async def approved_items(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, with_questions: bool, limit: int
) -> list[ApprovedItem]:
    """`with_questions` False: flashcards only (their back is no secret; see backend/questions/exports.py)."""
    return await fetch_all(
        conn,
        class_row(ApprovedItem),
        _APPROVED,
        scope(project_id, user_id, questions=with_questions, limit=limit),
    )

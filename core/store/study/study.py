"""Study scheduling rows (migration 0014): cards, review logs, settings and fitted parameters, and the
reads behind the queue and mastery. Every statement is scoped by project and by the caller's
membership in its SQL; a student's cards, reviews and settings are read and written only as theirs
(`user_id` = the caller), and the class aggregates require the caller to own the project. Times are
always parameters (the caller's clock), never SQL's now(), so tests can move time."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import date, datetime
from typing import Any, TypeVar
from uuid import UUID

from psycopg import AsyncConnection
from psycopg.rows import BaseRowFactory, class_row, kwargs_row, scalar_row

from core.store.sql.access import in_project, member_of, owner_of, scope
from core.store.sql.rows import fetch_all, fetch_one, fetch_required
from core.store.study.questions import COLUMNS, Question, studyable

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StudyCard:
    """A student's FSRS card for one item, as stored (study_cards); state 1 learning, 2 review,
    3 relearning."""

    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime
    reps: int
    lapses: int
    created_at: datetime  # the first review


@dataclass(frozen=True, slots=True)
class StudyItem(Question):
    """An item the caller may study, with their card (None: new) and their graded attempts' scores,
    oldest first."""

    card: StudyCard | None
    attempt_scores: list[float]


@dataclass(frozen=True, slots=True)
class LockedItem:
    id: UUID
    section_path: list[str]
    card: StudyCard | None


@dataclass(frozen=True, slots=True)
class StudySettings:
    """The caller's settings (the defaults where they set none) and the project's exam date."""

    project_exam_date: date | None
    exam_date: date | None
    new_per_day: int
    desired_retention: float
    parameters: list[float] | None  # fitted FSRS parameters; None: fsrs's defaults
    optimized_reviews: int | None  # the review count they were fitted on
    optimized_at: datetime | None


@dataclass(frozen=True, slots=True)
class SavedReview:
    review_id: UUID
    reviews: int  # the caller's reviews in the project, counting this one


@dataclass(frozen=True, slots=True)
class LoggedReviewRow:
    question_id: UUID
    rating: int
    reviewed_at: datetime
    duration_ms: int | None


@dataclass(frozen=True, slots=True)
class ClassCard:
    """One (member, item) with any activity; `student` is an opaque per-call number."""

    student: int
    question_id: UUID
    card: StudyCard | None
    scores: list[float] | None  # the member's attempt scores at the item, oldest first


@dataclass(frozen=True, slots=True)
class ClassItem:
    """A class item (never its answer) with its review counts over all members."""

    id: UUID
    section_path: list[str]
    question: str
    type: str
    attempts: int  # reviews, graded attempts included
    failures: int  # reviews rated Again


# What a student may study: core/store/study/questions.studyable (migration 0013), binding %(user_id)s.
STUDIABLE = studyable("q")
# The items the whole class studies (a student's own pending items are theirs, not the class's).
CLASS_ITEMS = "q.flag IS NULL AND q.status <> 'archived' AND q.review_state = 'approved'"

# The attempts mastery counts: a provisional grade (migration 0016) waits for an owner's review.
COUNTED = "a.status <> 'provisional'"

_CARD_FIELDS = tuple(field.name for field in fields(StudyCard))
# The card's columns as card_<field> (all NULL when the item is new), gathered by _with_card.
_CARD = ", ".join(f"c.{name} AS card_{name}" for name in _CARD_FIELDS)


def _with_card(record: Callable[..., T]) -> BaseRowFactory[T]:
    def build(**columns: Any) -> T:
        card = {name: columns.pop(f"card_{name}") for name in _CARD_FIELDS}
        return record(**columns, card=None if card["state"] is None else StudyCard(**card))

    return kwargs_row(build)


async def study_items(conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID) -> list[StudyItem]:
    """Every item the caller may study, with their card, in bank order, and the scores of their graded
    attempts at it (not the provisional ones), oldest first."""
    return await fetch_all(
        conn,
        _with_card(StudyItem),
        f"SELECT {COLUMNS}, {_CARD},"
        " coalesce((SELECT array_agg(a.score ORDER BY a.created_at, a.id) FROM question_attempts a"
        "  WHERE a.project_id = q.project_id AND a.question_id = q.id AND a.user_id = %(user_id)s"
        f"  AND {COUNTED}),"
        "  '{}') AS attempt_scores"
        " FROM questions q"
        " LEFT JOIN study_cards c ON c.project_id = q.project_id AND c.question_id = q.id"
        "  AND c.user_id = %(user_id)s"
        f" WHERE {in_project('q')} AND {STUDIABLE}"
        " ORDER BY q.created_at, q.id",
        scope(project_id, user_id),
    )


async def new_cards_since(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, since: datetime
) -> int:
    """Items the caller studied for the first time at or after `since` (the day's new-item budget)."""
    count = await fetch_required(
        conn,
        scalar_row,
        "SELECT count(*) AS n FROM study_cards c WHERE c.project_id = %(project_id)s"
        f" AND c.user_id = %(user_id)s AND c.created_at >= %(since)s AND {member_of('c.project_id')}",
        scope(project_id, user_id, since=since),
    )
    return int(count)


async def get_settings(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID
) -> StudySettings | None:
    """None when the caller is not a member."""
    return await fetch_one(
        conn,
        class_row(StudySettings),
        "SELECT p.exam_date AS project_exam_date, s.exam_date,"
        " coalesce(s.new_per_day, 20) AS new_per_day,"
        " coalesce(s.desired_retention, 0.9) AS desired_retention,"
        " s.parameters, s.optimized_reviews, s.optimized_at"
        " FROM projects p LEFT JOIN study_settings s ON s.project_id = p.id AND s.user_id = %(user_id)s"
        f" WHERE p.id = %(project_id)s AND {member_of('p.id')}",
        scope(project_id, user_id),
    )


_SETTABLE = ("exam_date", "new_per_day", "desired_retention")


async def put_settings(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    changes: Mapping[str, date | int | float | None],
) -> bool:
    """Sets the given fields of the caller's own settings (an explicit None exam_date clears it)."""
    fields = [key for key in _SETTABLE if key in changes]
    values = {key: changes.get(key) for key in _SETTABLE}
    updates = ", ".join(f"{key} = EXCLUDED.{key}" for key in fields) or "user_id = EXCLUDED.user_id"
    cur = await conn.execute(
        "INSERT INTO study_settings (project_id, user_id, exam_date, new_per_day, desired_retention)"
        " SELECT p.id, %(user_id)s, %(exam_date)s::date,"
        " coalesce(%(new_per_day)s::int, 20), coalesce(%(desired_retention)s::float8, 0.9)"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')}"
        f" ON CONFLICT (project_id, user_id) DO UPDATE SET {updates}, updated_at = now()",
        scope(project_id, user_id, **values),
    )
    return cur.rowcount == 1


async def lock_item(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID, question_id: UUID
) -> LockedItem | None:
    """Inside a transaction: serialises the caller's reviews of one item, and returns the item (if they
    may study it) with their card."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('study:' || %s::text || ':' || %s::text, 0))",
        (user_id, question_id),
    )
    return await fetch_one(
        conn,
        _with_card(LockedItem),
        f"SELECT q.id, q.section_path, {_CARD} FROM questions q"
        " LEFT JOIN study_cards c ON c.project_id = q.project_id AND c.question_id = q.id"
        "  AND c.user_id = %(user_id)s"
        f" WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s"
        f" AND {member_of('q.project_id')} AND {STUDIABLE}",
        scope(project_id, user_id, question_id=question_id),
    )


async def save_review(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    question_id: UUID,
    card: StudyCard,
    rating: int,
    source: str,
    state_before: int | None,
    reviewed_at: datetime,
    duration_ms: int | None = None,
) -> SavedReview | None:
    """Writes the card and logs the review; None when the caller is not a member."""
    params = scope(
        project_id,
        user_id,
        question_id=question_id,
        rating=rating,
        source=source,
        state_before=state_before,
        reviewed_at=reviewed_at,
        duration_ms=duration_ms,
        **{f"c_{key}": value for key, value in asdict(card).items()},
    )
    cur = await conn.execute(
        "INSERT INTO study_cards (project_id, user_id, question_id, state, step, stability, difficulty,"
        " due, last_review, reps, lapses, created_at)"
        " SELECT q.project_id, %(user_id)s, q.id, %(c_state)s, %(c_step)s, %(c_stability)s,"
        " %(c_difficulty)s, %(c_due)s, %(c_last_review)s, %(c_reps)s, %(c_lapses)s, %(c_created_at)s"
        " FROM questions q WHERE q.id = %(question_id)s AND q.project_id = %(project_id)s"
        f" AND {member_of('q.project_id')}"
        " ON CONFLICT (project_id, user_id, question_id) DO UPDATE SET state = EXCLUDED.state,"
        " step = EXCLUDED.step, stability = EXCLUDED.stability, difficulty = EXCLUDED.difficulty,"
        " due = EXCLUDED.due, last_review = EXCLUDED.last_review, reps = EXCLUDED.reps,"
        " lapses = EXCLUDED.lapses",
        params,
    )
    if cur.rowcount != 1:
        return None
    review_id = await fetch_required(
        conn,
        scalar_row,
        "INSERT INTO study_reviews (project_id, user_id, question_id, rating, source, state_before,"
        " reviewed_at, duration_ms)"
        " VALUES (%(project_id)s, %(user_id)s, %(question_id)s, %(rating)s, %(source)s, %(state_before)s,"
        " %(reviewed_at)s, %(duration_ms)s) RETURNING id",
        params,
    )
    count = await fetch_required(
        conn,
        scalar_row,
        "SELECT count(*) AS n FROM study_reviews r"
        " WHERE r.project_id = %(project_id)s AND r.user_id = %(user_id)s",
        params,
    )
    return SavedReview(review_id=review_id, reviews=int(count))


async def review_logs(
    conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID
) -> list[LoggedReviewRow]:
    """The caller's review log in the project, oldest first (the optimizer's input)."""
    return await fetch_all(
        conn,
        class_row(LoggedReviewRow),
        "SELECT r.question_id, r.rating, r.reviewed_at, r.duration_ms FROM study_reviews r"
        " WHERE r.project_id = %(project_id)s AND r.user_id = %(user_id)s"
        f" AND {member_of('r.project_id')} ORDER BY r.reviewed_at, r.id",
        scope(project_id, user_id),
    )


async def save_parameters(
    conn: AsyncConnection[object],
    *,
    project_id: UUID,
    user_id: UUID,
    parameters: Sequence[float] | None,
    reviews: int,
    at: datetime,
) -> bool:
    """Stores the caller's fitted parameters (None: keep fsrs's defaults) and the review count fitted on."""
    cur = await conn.execute(
        "INSERT INTO study_settings (project_id, user_id, parameters, optimized_reviews, optimized_at)"
        " SELECT p.id, %(user_id)s, %(parameters)s, %(reviews)s, %(at)s"
        f" FROM projects p WHERE p.id = %(project_id)s AND {member_of('p.id')}"
        " ON CONFLICT (project_id, user_id) DO UPDATE SET"
        " parameters = coalesce(EXCLUDED.parameters, study_settings.parameters),"
        " optimized_reviews = EXCLUDED.optimized_reviews, optimized_at = EXCLUDED.optimized_at",
        scope(
            project_id, user_id, parameters=list(parameters) if parameters else None, reviews=reviews, at=at
        ),
    )
    return cur.rowcount == 1


async def class_cards(conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID) -> list[ClassCard]:
    """Owners only: every member's cards and attempt scores (not the provisional ones) at the class's
    items, one row per (member, item) with any activity. `student` is an opaque per-call number, never
    the member's id."""
    return await fetch_all(
        conn,
        _with_card(ClassCard),
        f"SELECT dense_rank() OVER (ORDER BY s.user_id) AS student, s.question_id, {_CARD}, s.scores"
        " FROM (SELECT coalesce(c2.user_id, a2.user_id) AS user_id,"
        "        coalesce(c2.question_id, a2.question_id) AS question_id, a2.scores"
        "       FROM (SELECT * FROM study_cards WHERE project_id = %(project_id)s) c2"
        "       FULL JOIN (SELECT a.user_id, a.question_id,"
        "                   array_agg(a.score ORDER BY a.created_at, a.id) AS scores"
        "                  FROM question_attempts a WHERE a.project_id = %(project_id)s"
        f"                  AND {COUNTED}"
        "                  GROUP BY a.user_id, a.question_id) a2"
        "        ON a2.user_id = c2.user_id AND a2.question_id = c2.question_id) s"
        " JOIN questions q ON q.id = s.question_id AND q.project_id = %(project_id)s"
        " JOIN project_members pm ON pm.project_id = q.project_id AND pm.user_id = s.user_id"
        " LEFT JOIN study_cards c ON c.project_id = q.project_id AND c.question_id = q.id"
        "  AND c.user_id = s.user_id"
        f" WHERE {owner_of('q.project_id')} AND {CLASS_ITEMS}",
        scope(project_id, user_id),
    )


async def class_items(conn: AsyncConnection[object], *, project_id: UUID, user_id: UUID) -> list[ClassItem]:
    """Owners only: the class's items (id, section path, question text — never the answer) with their
    review counts over all members: `attempts` (reviews, graded attempts included) and `failures`
    (reviews rated Again)."""
    return await fetch_all(
        conn,
        class_row(ClassItem),
        "SELECT q.id, q.section_path, q.question, q.type,"
        " count(r.id) AS attempts, count(r.id) FILTER (WHERE r.rating = 1) AS failures"
        " FROM questions q"
        " LEFT JOIN study_reviews r ON r.project_id = q.project_id AND r.question_id = q.id"
        f" WHERE q.project_id = %(project_id)s AND {owner_of('q.project_id')} AND {CLASS_ITEMS}"
        " GROUP BY q.id ORDER BY q.created_at, q.id",
        scope(project_id, user_id),
    )

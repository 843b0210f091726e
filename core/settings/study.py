"""Exam mode's scheduling defaults (core/study/exam.py reads its defaults from here)."""

from pydantic import Field

from core.settings.group import SettingsGroup

# The term-time retention of exam mode; chosen by benchmarks/models/study_sim.py on its development seed.
EXAM_TERM_RETENTION = 0.6
# At most this many final reviews planned a day (None: no cap); chosen by benchmarks/models/study_sim.py
# on its development seed.
EXAM_DAILY_REVIEW_MAX: int | None = 30


class StudySettings(SettingsGroup):
    # The retention a card is kept at during the term while an exam is ahead (the exam itself is planned
    # for the student's desired retention).
    exam_term_retention: float = Field(
        default=EXAM_TERM_RETENTION, ge=0.05, le=0.99, validation_alias="EXAM_TERM_RETENTION"
    )
    # At most this many final reviews before the exam planned a day, overflow moved earlier within each
    # card's window; 0 = no cap (every final review on the day before the exam).
    exam_daily_review_max: int = Field(
        default=EXAM_DAILY_REVIEW_MAX or 0, ge=0, le=10_000, validation_alias="EXAM_DAILY_REVIEW_MAX"
    )

"""Pydantic models at the API edge."""

from datetime import date, datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from backend.web.records import record_fields
from core.accounts.roles import Role
from core.store.accounts.members import Member

Language = Literal["pt", "en", "auto"]
SampleRate = Annotated[
    float | None,
    Field(
        default=None,
        ge=0,
        le=1,
        description="share of this project's answers judged for groundedness; null: GROUNDEDNESS_SAMPLE_RATE",
    ),
]


class ProjectCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=5000)
    language: Language = "auto"
    groundedness_sample_rate: SampleRate = None


class ProjectUpdate(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=5000)
    language: Language | None = None
    groundedness_sample_rate: SampleRate = None  # an explicit null goes back to the setting
    # Owners only: graded attempts per member and question; an explicit null: unlimited.
    max_attempts_per_question: int | None = Field(default=None, ge=1, le=1000)
    # Owners only: members may study (and generate) their own items before a teacher approves.
    students_study_own_items: bool | None = None
    # Owners only: the class's exam date (the study queue's exam mode); null clears it.
    exam_date: date | None = None


class ProjectOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    name: str
    description: str
    language: Language
    groundedness_sample_rate: float | None = None
    max_attempts_per_question: int | None = None  # null: unlimited
    students_study_own_items: bool = False
    exam_date: date | None = None
    role: Role
    created_at: datetime
    updated_at: datetime


class MemberOut(BaseModel):
    project_id: UUID
    user_id: UUID
    email: str
    role: Role


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role


class MemberRow(record_fields(Member, role=Role)):
    pass  # a member, as the store lists them


class MemberList(BaseModel):
    """Owners and editors see every member; a viewer sees the owners, the editors and themself. `counts`
    and `total` are the whole project's either way."""

    members: list[MemberRow]
    counts: dict[Role, int]
    total: int
    limit: int
    offset: int

"""Pydantic models at the API edge."""

from datetime import date, datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from backend.web.records import record_fields
from core.accounts.roles import Role
from core.store.content.chunks import Chunk
from core.store.runs.jobs import Job
from core.text.filetypes import SourceType

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


class DocumentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: UUID
    project_id: UUID
    title: str
    filename: str
    source_type: SourceType
    kind: Literal["uploaded", "generated"]
    language: Language
    version: int
    indexed_version: int | None
    status: Literal["queued", "processing", "ready", "failed"]
    error: str | None
    warnings: list[str]
    page_count: int | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime


class DocumentAccepted(BaseModel):
    document_id: UUID
    job_id: str
    version: int
    status: str


class DocumentTextUpdate(BaseModel):
    """PATCH with JSON: new Markdown/text content and/or a new title; either one reindexes."""

    # Bounded by MAX_UPLOAD_BYTES (a setting, so checked in the route; the body is capped before that).
    content: str | None = Field(default=None, min_length=1, description="at most MAX_UPLOAD_BYTES as UTF-8")
    title: str | None = Field(default=None, min_length=1, max_length=300)


class ChunkOut(record_fields(Chunk)):
    pass  # the stored chunk, as the store lists it


class JobOut(record_fields(Job)):
    status: Literal["queued", "running", "succeeded", "failed"]
    deaths: int = 0  # attempts cut short by the worker process dying (JOB_MAX_DEATHS fails the job)


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role


class MemberRow(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    user_id: UUID
    email: str
    role: Role
    joined_at: datetime


class MemberList(BaseModel):
    """Owners and editors see every member; a viewer sees the owners, the editors and themself. `counts`
    and `total` are the whole project's either way."""

    members: list[MemberRow]
    counts: dict[Role, int]
    total: int
    limit: int
    offset: int

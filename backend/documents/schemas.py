"""Pydantic models at the API edge: documents, their chunks and their jobs."""

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from backend.projects.schemas import Language
from backend.web.records import record_fields
from core.store.content.chunks import Chunk
from core.store.content.documents import Document
from core.store.runs.jobs import Job
from core.text.filetypes import SourceType


class DocumentOut(
    record_fields(
        Document,
        source_type=SourceType,
        kind=Literal["uploaded", "generated"],
        language=Language,
        status=Literal["queued", "processing", "ready", "failed"],
    )
):
    pass  # the stored document, as the store lists it


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

"""A course uploaded at once: what was taken, what was refused and why, and the batch's progress."""

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel

from backend.documents.schemas import DocumentAccepted
from backend.web.records import record_fields
from core.store.content.batches import BatchDocument
from core.text.filetypes import SourceType


class BatchFileRefused(BaseModel):
    path: str
    reason: str


class BatchFileAccepted(DocumentAccepted):
    path: str


class BatchAccepted(BaseModel):
    batch_id: UUID
    accepted: list[BatchFileAccepted]
    refused: list[BatchFileRefused]


class BatchDocumentOut(record_fields(BatchDocument, source_type=SourceType)):
    pass  # a document of the batch, as the store lists it


class BatchProgress(BaseModel):
    """One summary for the whole batch: counts per status, `done` once none is queued or processing."""

    batch_id: UUID
    created_at: datetime
    total: int
    queued: int
    processing: int
    ready: int
    failed: int
    done: bool
    documents: list[BatchDocumentOut]
    refused: list[BatchFileRefused]

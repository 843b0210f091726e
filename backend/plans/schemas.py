"""Pydantic models of the Content Planner and Content Writer API."""

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.common.plan import PlanGap, PlanSection
from agents.planner.config import DEFAULT_SECTIONS, MAX_SECTIONS
from agents.writer.kinds import Kind
from core.store.runs.plans import Plan


class PlanRequest(BaseModel):
    topic: str | None = Field(
        default=None, min_length=1, max_length=300, description="omitted: plan the whole project"
    )
    max_sections: int = Field(default=DEFAULT_SECTIONS, ge=1, le=MAX_SECTIONS)


class PlanOut(BaseModel):
    id: UUID
    project_id: UUID
    topic: str | None
    query: str = Field(description="what was retrieved: the topic, or the project's titles and headings")
    retrieved: int = Field(description="chunks the planner retrieved and grouped")
    sections: list[PlanSection]
    gaps: list[PlanGap] = Field(description="sections with coverage below the threshold or no support")
    unassigned_chunk_ids: list[int] = Field(description="retrieved chunks no section uses")
    created_by: UUID
    created_at: datetime
    timings_ms: dict[str, float] = Field(default_factory=dict, description="this request's stages only")

    @classmethod
    def from_plan(cls, plan: Plan, timings_ms: dict[str, float] | None = None) -> "PlanOut":
        """The stored outline's JSON is flattened into the plan."""
        outline = plan.outline
        return cls(
            id=plan.id,
            project_id=plan.project_id,
            topic=plan.topic,
            query=outline["query"],
            retrieved=outline["retrieved"],
            sections=outline["sections"],
            gaps=outline["gaps"],
            unassigned_chunk_ids=outline["unassigned_chunk_ids"],
            created_by=plan.created_by,
            created_at=plan.created_at,
            timings_ms=timings_ms or {},
        )


class NoteRequest(BaseModel):
    plan_id: UUID | None = None
    topic: str | None = Field(default=None, min_length=1, max_length=300)
    max_sections: int = Field(
        default=DEFAULT_SECTIONS, ge=1, le=MAX_SECTIONS, description="with a topic: the plan's size"
    )
    kind: Kind = Field(default="note", description="a study note, study guide, FAQ or glossary")

    @model_validator(mode="after")
    def _one_source(self) -> "NoteRequest":
        if (self.plan_id is None) == (self.topic is None):
            raise ValueError("give exactly one of plan_id or topic")
        return self


class NoteAccepted(BaseModel):
    job_id: str
    status: str
    plan_id: UUID | None


class NoteJobOut(BaseModel):
    """The job, and once it succeeded the note's document id and what the writer did."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    project_id: UUID
    status: Literal["queued", "running", "succeeded", "failed"]
    stage: str
    done: int
    total: int
    error: str | None
    document_id: UUID | None = Field(description="the generated note, once the job succeeded")
    result: dict[str, Any] | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

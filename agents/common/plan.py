"""A study plan's sections and gaps: what the Content Planner gives back and the Content Writer writes
from."""

from pydantic import BaseModel

from core.store.content.refs import ChunkRef


class SourceRef(ChunkRef):
    """A retrieved chunk that supports a section, as the application found it."""

    relevance: float  # 0..1, see agents/planner/graph.py:_relevance


class PlanSection(BaseModel):
    title: str
    goal: str
    chunk_ids: list[int]
    sources: list[SourceRef]
    support: int  # supporting chunks
    relevance: float  # their mean relevance, 0..1
    coverage: float  # min(1, support / FULL_SUPPORT) x relevance, 0..1


class PlanGap(BaseModel):
    title: str
    goal: str = ""
    reason: str
    coverage: float = 0.0

"""What the Content Planner takes, keeps and gives back, and the small schema the model fills in."""

from typing import Any, TypedDict

from pydantic import BaseModel, Field

from agents.common.plan import PlanGap, PlanSection
from agents.planner import config
from core.retrieval import Candidate


class DraftSection(BaseModel):
    title: str = Field(description="a few words")
    goal: str = Field(description="one sentence: what the student will learn")
    sources: list[int] = Field(
        description="numbers of the listed topics this section covers",
        json_schema_extra={"maxItems": config.MAX_CHUNKS_PER_SECTION},
    )


# The model's reply. Topic numbers, not database ids: the application maps them back to chunks and
# drops the ones that name no topic. maxItems only shapes a grammar-constrained reply; longer lists
# are cut by the application rather than rejected. (No docstring: it would become the function's
# description in function-calling mode.)
class DraftOutline(BaseModel):
    sections: list[DraftSection] = Field(json_schema_extra={"maxItems": config.MAX_SECTIONS})


class PlannerInput(TypedDict):
    topic: str | None  # None: plan the whole project
    query: str  # what is retrieved: the topic, or the project's titles and headings
    max_sections: int


class PlannerState(PlannerInput, total=False):
    retrieved: list[Candidate]
    topics: list[list[Candidate]]  # what the model sees, numbered: chunks grouped by section
    relevance: dict[int, float]
    draft: list[DraftSection]
    sections: list[PlanSection]
    gaps: list[PlanGap]
    unassigned_chunk_ids: list[int]
    invented: list[int]  # topic numbers the model gave that name no topic


class PlannerOutput(TypedDict):
    retrieved: list[Candidate]
    sections: list[PlanSection]
    gaps: list[PlanGap]
    unassigned_chunk_ids: list[int]
    invented: list[int]


def outline_document(query: str, output: PlannerOutput) -> dict[str, Any]:
    """What a plan stores (plans.outline) and the API returns, from the graph's output."""
    return {
        "query": query,
        "retrieved": len(output["retrieved"]),
        "sections": [section.model_dump() for section in output["sections"]],
        "gaps": [gap.model_dump() for gap in output["gaps"]],
        "unassigned_chunk_ids": output["unassigned_chunk_ids"],
        "invented": output["invented"],
    }

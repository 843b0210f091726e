"""What the Content Writer takes, keeps and gives back."""

import operator
from typing import Annotated, NotRequired, TypedDict

from pydantic import BaseModel, Field

from agents.common.citations import Citation
from agents.common.plan import PlanGap, PlanSection
from agents.writer import config
from core.store.content.refs import ChunkRef

# Every drafted entry names the one excerpt it comes from; graph.map_citations makes it a citation.
SourceNumber = Annotated[int, Field(description="the number of the source it comes from")]


def sentences(description: str) -> str:
    """A draft's text field: described to the model, held to a point's length by the grammar."""
    return Field(description=description, json_schema_extra={"maxLength": config.POINT_CHARS})  # type: ignore[no-any-return]


class Point(BaseModel):
    text: str = sentences("one or two plain sentences")
    source: SourceNumber


# The model's reply for one section (no docstring: it would become the function's description).
# maxItems/maxLength bound a grammar-constrained reply; the application cuts longer ones.
class SectionDraft(BaseModel):
    points: list[Point] = Field(json_schema_extra={"maxItems": config.MAX_POINTS})


class WrittenSection(BaseModel):
    title: str
    # Markdown key points with citations as [^chunk-{id}] markers, numbered when the note is assembled.
    body: str
    sources: list[Citation]  # the chunks the section was written from, in the order shown to the model
    cited_chunk_ids: list[int]
    dropped_citations: list[str]  # labels the model wrote that name no source, removed from the text
    uncited: bool = False  # no valid inline citation: the section lists its sources instead
    skipped: str | None = None  # why nothing was written (no material retrieved)
    retrieval_ms: float = 0.0
    generation_ms: float = 0.0


class Reference(ChunkRef):
    number: int


class WriterInput(TypedDict):
    title: str  # the note's title: the plan's topic, or the project's name
    sections: list[PlanSection]
    gaps: list[PlanGap]  # listed at the end of the note, so a reader knows what the material lacks
    # agents/writer/kinds.Kind: "note" (the default), "study_guide", "faq" or "glossary".
    kind: NotRequired[str]


class WriterState(WriterInput, total=False):
    index: int  # the next section to write
    written: Annotated[list[WrittenSection], operator.add]
    markdown: str
    references: list[Reference]


class WriterOutput(TypedDict):
    written: list[WrittenSection]
    markdown: str
    references: list[Reference]

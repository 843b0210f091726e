"""The mind map as the API gives it: a flat list of nodes, each naming its parent, and the links from
the concepts to the sections that hold their passages."""

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from core.store.content.refs import Location


class _Record(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class PassageOut(_Record):
    chunk_id: int
    document_id: UUID


class MapNodeOut(_Record):
    id: str = Field(description="stable within one map: what `parent` and the links name")
    parent: str | None = Field(description="None for the root")
    kind: Literal["project", "document", "section", "concepts", "concept"]
    label: str = Field(description="the project's name, a document's title, a heading, a concept")
    document_id: UUID | None = Field(description="the node's document; None for the project and concepts")
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    location: Location | None
    passages: list[PassageOut] = Field(
        min_length=1, description="its first chunks (its own first, then those under it): every node has one"
    )
    chunk_count: int = Field(description="all the chunks under it, of which `passages` are the first")


class MapLinkOut(_Record):
    source: str = Field(description="a concept node")
    target: str = Field(description="a node holding its passages")


class MindMapOut(_Record):
    project_id: UUID
    document_id: UUID | None
    nodes: list[MapNodeOut] = Field(description="parents before children; empty when nothing is indexed")
    links: list[MapLinkOut]
    concepts_from: Literal["plans", "headings", "none"] = Field(
        description="the plans' sections, else terms the headings share"
    )
    depth: int = Field(description="heading levels shown below each document")
    folded: bool = Field(description="deeper headings were folded into the last level shown")
    truncated: bool = Field(description="documents were left out to stay within node_cap")
    node_cap: int

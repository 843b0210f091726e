"""ChunkRef: which chunk, of which document, where in it. The base of every citation and source model
(agents/common/citations.Citation, agents/planner/state.SourceRef, agents/writer/state.Reference).

Only the fields every one of them carries: a base field comes first in a subclass's JSON, so these are
the ones those models already listed first. The document id is a string, as the agents' JSON has it."""

from pydantic import BaseModel, ConfigDict


class ChunkRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    chunk_id: int
    document_id: str
    document_title: str
    section_path: list[str]
    page_start: int | None  # 1-based, PDF only
    page_end: int | None

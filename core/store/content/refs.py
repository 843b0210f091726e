"""ChunkRef: which chunk, of which document, where in it. The base of every citation and source model
(agents/common/citations.Citation, agents/planner/state.SourceRef, agents/writer/state.Reference).

Only the fields every one of them carries: a base field comes first in a subclass's JSON, so these are
the ones those models already listed first. The document id is a string, as the agents' JSON has it."""

from typing import Literal

from pydantic import BaseModel, ConfigDict

# What page_start/page_end count: a deck's slides or a PDF's (or scan's) pages; None where the format has
# neither (Markdown, Word, web pages, e-books: cited by section).
Location = Literal["page", "slide"]
_LOCATION_OF_SOURCE: dict[str, Location] = {"pdf": "page", "image": "page", "pptx": "slide"}


def location_of(source_type: str | None) -> Location | None:
    return _LOCATION_OF_SOURCE.get(source_type or "")


class ChunkRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    chunk_id: int
    document_id: str
    document_title: str
    section_path: list[str]
    page_start: int | None  # 1-based page (PDF, scan) or slide (deck); see `location`
    page_end: int | None
    location: Location | None = None
    # The stored version the chunk was cut from and its characters in that version's parsed text: what
    # opens the cited spot (GET .../documents/{id}/versions/{version}/file, .../text) after a newer version
    # replaced the chunk. None in citations stored before issue 42.
    document_version: int | None = None
    char_start: int | None = None
    char_end: int | None = None

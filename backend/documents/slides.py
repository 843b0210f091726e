"""A deck's cited slide drawn as it is laid out (issue 42): the stored version's slide read in the bounded
child (workers/parsing/slide_layout.py), never in the API process. No HTTP here."""

from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from backend.documents import cited_spot
from core.errors import Unprocessable
from core.messages import Text
from core.settings.parsing import ParseSettings
from core.store.content import versions
from core.store.sql.access import ProjectScope
from core.text.slide_layout import SlideLayout
from workers.parsing.bounded import slide_layout_bounded
from workers.parsing.types import ParseError


async def slide_layout(
    pool: AsyncConnectionPool,
    access: ProjectScope,
    *,
    document_id: UUID,
    version: int,
    slide: int,
    limits: ParseSettings,
) -> SlideLayout:
    async with pool.connection() as conn:
        stored = await versions.stored_version(conn, **access, document_id=document_id, version=version)
    if stored is None:
        raise cited_spot.not_found()
    if cited_spot.source_type_of(stored) != "pptx":
        raise Unprocessable(Text("version.not_a_deck"))
    try:  # no connection is held while the deck is read
        return await slide_layout_bounded(
            stored.content, filename=stored.filename, slide=slide, limits=limits
        )
    except ParseError as error:
        raise Unprocessable(Text("version.slide_unreadable", reason=str(error))) from error

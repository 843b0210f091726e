"""The stored versions a citation opens (issue 42): any member, viewers included, reads the exact bytes of
the version a citation names (a newer upload does not move an old citation) and the passage in it. The
membership is checked in the SQL of each read; a version of a document of another project, or of a
project the caller is not in, is 404 like one that does not exist."""

import re
import unicodedata
from dataclasses import asdict
from typing import Annotated
from urllib.parse import quote
from uuid import UUID

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status

from backend.deps import ApiResourcesDep, DbDep, ProjectDep, SettingsDep
from backend.documents import cited_spot
from backend.documents.page_highlight import page_highlight
from backend.documents.slides import slide_layout
from backend.documents.version_schemas import PageHighlightOut, SlideLayoutOut, VersionSpot
from core.messages import Text
from core.store.content import versions

router = APIRouter(prefix="/projects/{project_id}/documents/{document_id}/versions", tags=["documents"])

INT4_MAX = 2**31 - 1  # the columns' integer: a larger number is 422, not a database error
VersionNumber = Annotated[int, Path(ge=1, le=INT4_MAX, description="as a citation's `document_version`")]
Offset = Annotated[int | None, Query(ge=0, le=INT4_MAX)]
QUOTE_MAX_CHARS = 4_000  # a chunk's text is at most a few thousand characters
QUOTE_HELP = "the citation's own text, for a version whose chunks a newer one replaced"
# A version's bytes never change, so the browser may keep them a while; `private`: no shared cache keeps a
# member's file, and the 10 minutes bound how long a removed member's browser shows its copy unasked.
FILE_CACHE = "private, max-age=600"
# A web page is shown as the app's text, never run: opened by its URL, it is inert (no script, no origin).
SANDBOX = "sandbox; default-src 'none'"


def _inline(filename: str) -> str:
    """Content-Disposition: shown in the browser, saved under its own name (RFC 6266 filename*)."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    fallback = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_name).strip("-.")[:120] or "document"
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename[:200], safe='')}"


@router.get(
    "/{version}/file",
    response_class=Response,
    responses={
        200: {"description": "the version's exact bytes", "content": {"application/octet-stream": {}}}
    },
)
async def version_file(
    document_id: UUID, version: VersionNumber, request: Request, access: ProjectDep, db: DbDep
) -> Response:
    """The exact bytes of this version, with their media type, shown inline (`nosniff`); an ETag of their
    sha256 answers a repeated request with 304."""
    async with db.connection() as conn:
        stored = await versions.stored_version(conn, **access.scope, document_id=document_id, version=version)
    if stored is None:
        raise cited_spot.not_found()
    source_type = cited_spot.source_type_of(stored)
    etag = f'"{stored.content_hash}"'
    headers = {
        "Content-Disposition": _inline(stored.filename),
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": FILE_CACHE,
        "ETag": etag,
    }
    if source_type == "html":
        headers["Content-Security-Policy"] = SANDBOX
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    return Response(stored.content, media_type=cited_spot.media_type_of(stored, source_type), headers=headers)


@router.get("/{version}/text")
async def version_text(
    document_id: UUID,
    version: VersionNumber,
    access: ProjectDep,
    db: DbDep,
    settings: SettingsDep,
    char_start: Offset = None,
    char_end: Offset = None,
    page: Annotated[int | None, Query(ge=1, le=INT4_MAX, description="a deck's slide to show")] = None,
) -> VersionSpot:
    """The cited passage of this version (`char_start`/`char_end` as the citation names them) and, for
    the formats shown as text (`shown_as: text`), the section around it (a deck: the slide) from this
    version's parsed text. A PDF or a page image is drawn by the app from .../file: `passage.text` is the
    text of the version's chunks while they are live, else null."""
    wanted = _range(char_start, char_end)
    async with db.connection() as conn:
        stored = await versions.stored_version(conn, **access.scope, document_id=document_id, version=version)
        if stored is None:
            raise cited_spot.not_found()
        source_type = cited_spot.source_type_of(stored)
        chunks: list[versions.VersionChunk] = []
        if source_type in cited_spot.SHOWN_BY_PAGE and wanted is not None:
            chunks = await versions.chunks_in_range(
                conn, **access.scope, document_id=document_id, version=version,
                char_start=wanted.start, char_end=wanted.end,
            )  # fmt: skip
    # No connection is held while a file is parsed.
    if source_type in cited_spot.SHOWN_BY_PAGE:
        spot = cited_spot.page_spot(stored, source_type, chunks, wanted)
    else:
        spot = await cited_spot.text_spot(stored, source_type, wanted, page, settings.parsing)
    return VersionSpot.model_validate(
        {
            "document_id": stored.document_id,
            "version": stored.version,
            "title": stored.title,
            "filename": stored.filename,
            **asdict(spot),
        }
    )


@router.get("/{version}/pages/{page}/highlight")
async def version_page_highlight(
    document_id: UUID,
    version: VersionNumber,
    page: Annotated[int, Path(ge=1, le=INT4_MAX, description="1-based, as a citation's `page_start`")],
    access: ProjectDep,
    db: DbDep,
    settings: SettingsDep,
    resources: ApiResourcesDep,
    char_start: Offset = None,
    char_end: Offset = None,
    quote: Annotated[str | None, Query(max_length=QUOTE_MAX_CHARS, description=QUOTE_HELP)] = None,
) -> PageHighlightOut:
    """Where the cited passage lies on a page of a PDF or page image, for a page the browser cannot mark
    by its text (a scan): boxes over the passage's lines, from the page's words (its text layer, else OCR,
    read on the first request and kept). 422 for a version shown as text, a page it does not have, or a
    scan OCR cannot read on this server."""
    highlight = await page_highlight(
        db, access.scope, document_id=document_id, version=version, page=page,
        wanted=_range(char_start, char_end), quote=quote, limits=settings.parsing,
        reader=resources.page_reader,
    )  # fmt: skip
    return PageHighlightOut.model_validate(asdict(highlight))


@router.get("/{version}/slides/{slide}")
async def version_slide(
    document_id: UUID,
    version: VersionNumber,
    slide: Annotated[int, Path(ge=1, le=INT4_MAX, description="1-based, as a citation's `page_start`")],
    response: Response,
    access: ProjectDep,
    db: DbDep,
    settings: SettingsDep,
) -> SlideLayoutOut:
    """A slide of a deck version laid out for drawing: its text boxes and pictures placed as fractions of
    the slide, the paragraphs' sizes as PowerPoint resolves them. 422 for a version that is no deck, or a
    slide it does not have."""
    layout = await slide_layout(
        db, access.scope, document_id=document_id, version=version, slide=slide, limits=settings.parsing
    )
    response.headers["Cache-Control"] = FILE_CACHE  # a version never changes
    return SlideLayoutOut.model_validate(asdict(layout))


def _range(char_start: int | None, char_end: int | None) -> cited_spot.Range | None:
    if (char_start is None) != (char_end is None) or (char_start or 0) > (char_end or 0):
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, Text("version.bad_range"))
    return cited_spot.Range(char_start, char_end) if char_start is not None and char_end is not None else None

"""Exports (any member): the approved items as an Anki deck or as CSV/JSON, and a finished note, study
guide, FAQ or glossary as Markdown with its references.

Only approved items that still stand (in the bank, not flagged) are exported. A question's answer is
the bank's secret where the project limits attempts (backend/questions/router.py): there, members who
are not editors or owners get the flashcards only (a flashcard's back is part of the card anyway)."""

import asyncio
import json
import re
import unicodedata
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Response, status

from backend.deps import DbDep, ProjectAccess, ProjectDep
from core.exports import anki, bank
from core.messages import Text
from core.store.content import documents
from core.store.runs import notes
from core.store.study import exports
from core.store.study.exports import ApprovedItem

router = APIRouter(prefix="/projects/{project_id}", tags=["exports"])

EXPORT_LIMIT = 10_000  # items per export: a course's bank is hundreds


def _with_questions(access: ProjectAccess) -> bool:
    return access.role in ("owner", "editor") or access.project.max_attempts_per_question is None


def _attachment(name: str, extension: str) -> dict[str, str]:
    """Content-Disposition with an ASCII file name and the real one (RFC 6266 filename*)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_name).strip("-.")[:80] or "studyai"
    real = quote(f"{name[:120]}.{extension}", safe="")
    return {"Content-Disposition": f"attachment; filename=\"{slug}.{extension}\"; filename*=UTF-8''{real}"}


async def _items(db: DbDep, access: ProjectAccess) -> list[ApprovedItem]:
    async with db.connection() as conn:
        return await exports.approved_items(
            conn, **access.scope, with_questions=_with_questions(access), limit=EXPORT_LIMIT
        )


@router.get("/exports/anki", response_class=Response)
async def export_anki(access: ProjectDep, db: DbDep) -> Response:
    """An .apkg deck named after the project: a card per approved flashcard and question, each with
    its source reference (document title, section path, pages)."""
    rows = await _items(db, access)
    name = access.project.name
    content = await asyncio.to_thread(anki.build_package, access.id, name, rows)  # SQLite and zip work
    return Response(content, media_type="application/octet-stream", headers=_attachment(name, "apkg"))


@router.get("/exports/questions", response_class=Response)
async def export_questions(
    access: ProjectDep, db: DbDep, format: Literal["csv", "json"] = "json"
) -> Response:
    """The approved bank: JSON (a list of items with options, answer, explanation and source) or CSV."""
    records = [bank.record(row) for row in await _items(db, access)]
    name = access.project.name
    if format == "csv":
        return Response(
            bank.to_csv(records), media_type="text/csv; charset=utf-8", headers=_attachment(name, "csv")
        )
    body = json.dumps(records, ensure_ascii=False, indent=1)
    return Response(body, media_type="application/json", headers=_attachment(name, "json"))


@router.get("/notes/{job_id}/markdown", response_class=Response)
async def note_markdown(
    job_id: Annotated[str, Path(max_length=200)], access: ProjectDep, db: DbDep
) -> Response:
    """The finished note (or study guide, FAQ, glossary) as Markdown, its citations numbered as
    footnotes and listed under References (document, section path, pages). 409 until it is written;
    404 once its document was deleted."""
    async with db.connection() as conn:
        job = await notes.get_note_job(conn, **access.scope, job_id=job_id)
        if job is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, Text("note.job_not_found"))
        if job.status != "succeeded":
            raise HTTPException(status.HTTP_409_CONFLICT, Text("note.not_written", status=job.status))
        content = None
        if job.document_id is not None:
            content = await documents.latest_content(conn, **access.scope, document_id=job.document_id)
    if content is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("note.document_deleted"))
    title = (job.result or {}).get("title") or "note"
    return Response(content, media_type="text/markdown; charset=utf-8", headers=_attachment(title, "md"))

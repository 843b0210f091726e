"""The approved question bank as records (JSON) or rows (CSV), each with its source reference."""

import csv
import io
from collections.abc import Sequence
from typing import Any

from core.store.study.exports import ApprovedItem

CSV_FIELDS = (
    "id", "type", "question", "options", "answer", "explanation", "difficulty",
    "document_title", "section_path", "pages", "source", "source_chunk_ids",
)  # fmt: skip
# A cell starting with one of these is a formula to a spreadsheet: items come from uploaded material.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def pages(start: int | None, end: int | None) -> str:
    if start is None:
        return ""
    return f"p. {start}" if end in (None, start) else f"pp. {start}–{end}"


def source_reference(item: ApprovedItem) -> str:
    """`Document title › Section › Subsection, pp. 3–4`: where a student looks the item up."""
    parts = [item.document_title or "(document removed)", *item.section_path]
    where = " › ".join(dict.fromkeys(parts))  # a section path often starts with the title itself
    span = pages(item.page_start, item.page_end)
    return f"{where}, {span}" if span else where


def record(item: ApprovedItem) -> dict[str, Any]:
    return {
        "id": str(item.id),
        "type": item.type,
        "question": item.question,
        "options": item.options,
        "answer": item.answer,
        "explanation": item.explanation,
        "difficulty": item.difficulty,
        "document_id": None if item.document_id is None else str(item.document_id),
        "document_title": item.document_title,
        "section_path": list(item.section_path),
        "page_start": item.page_start,
        "page_end": item.page_end,
        "source": source_reference(item),
        "source_chunk_ids": list(item.source_chunk_ids),
    }


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(records: Sequence[dict[str, Any]]) -> str:
    """One row per item; lists joined (options by " | ", the section path by " › ")."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_FIELDS)
    for item in records:
        values = {
            **item,
            "options": " | ".join(item["options"]),
            "section_path": " › ".join(item["section_path"]),
            "pages": pages(item["page_start"], item["page_end"]),
            "source_chunk_ids": " ".join(str(i) for i in item["source_chunk_ids"]),
        }
        writer.writerow([_cell(values[field]) for field in CSV_FIELDS])
    return out.getvalue()

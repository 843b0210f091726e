"""The approved question bank as records (JSON) or rows (CSV), each with its source reference."""

import csv
import hashlib
import io
from collections.abc import Sequence
from typing import Any

CSV_FIELDS = (
    "id", "type", "question", "options", "answer", "explanation", "difficulty",
    "document_title", "section_path", "pages", "source", "source_chunk_ids",
)  # fmt: skip
# A cell starting with one of these is a formula to a spreadsheet: items come from uploaded material.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def shuffled_options(row: dict[str, Any]) -> list[str]:
    """A multiple-choice item's answer and distractors in a fixed order per item (the same for every
    reader and export); [] for other types."""
    if row["type"] != "multiple_choice":
        return []
    return sorted(
        [row["answer"], *row["distractors"]],
        key=lambda option: hashlib.sha256(f"{row['id']}:{option}".encode()).hexdigest(),
    )


def pages(start: int | None, end: int | None) -> str:
    if start is None:
        return ""
    return f"p. {start}" if end in (None, start) else f"pp. {start}–{end}"


def source_reference(row: dict[str, Any]) -> str:
    """`Document title › Section › Subsection, pp. 3–4`: where a student looks the item up."""
    parts = [row.get("document_title") or "(document removed)", *row["section_path"]]
    where = " › ".join(dict.fromkeys(parts))  # a section path often starts with the title itself
    span = pages(row.get("page_start"), row.get("page_end"))
    return f"{where}, {span}" if span else where


def record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "type": row["type"],
        "question": row["question"],
        "options": shuffled_options(row),
        "answer": row["answer"],
        "explanation": row["explanation"],
        "difficulty": row["difficulty"],
        "document_id": None if row["document_id"] is None else str(row["document_id"]),
        "document_title": row.get("document_title"),
        "section_path": list(row["section_path"]),
        "page_start": row.get("page_start"),
        "page_end": row.get("page_end"),
        "source": source_reference(row),
        "source_chunk_ids": list(row["source_chunk_ids"]),
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

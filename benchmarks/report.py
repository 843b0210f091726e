"""The one report writer of the benchmarks: each script renders its figures as Markdown (a header that
names the command, the machine and the model, then its tables) and writes them here, with the raw
figures as JSON beside the Markdown where a later run or a plot reads them back."""

import json
from pathlib import Path
from typing import Any

REPORTS = Path(__file__).resolve().parent / "reports"


def report_path(name: str) -> Path:
    """benchmarks/reports/<name>.md"""
    return REPORTS / f"{name}.md"


def write_report(path: Path, markdown: str, *, data: Any = None) -> Path:
    """Writes `markdown` to `path` (its suffix made .md) and, given `data`, the same name as .json;
    returns the Markdown's path, which the script prints."""
    path = path.with_suffix(".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown if markdown.endswith("\n") else markdown + "\n", encoding="utf-8")
    if data is not None:
        path.with_suffix(".json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    return path

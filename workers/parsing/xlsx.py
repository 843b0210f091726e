"""Excel (.xlsx) into one Markdown table per sheet.

openpyxl: the maintained pure-Python reader of the format; read_only streams each sheet's rows instead
of building every cell object, and data_only gives the values formulas last computed (what a reader
of the sheet sees), not the formulas. Sheets have no pages: page is None."""

import datetime
import io
import zipfile
from collections.abc import Iterable, Iterator

from openpyxl import load_workbook

from workers.parsing.office import markdown_table, no_text
from workers.parsing.structured import Block, Found, StructuredFormat, parser_for

WHAT = "Excel file"
EMPTY_SHEET = "(no data on this sheet)"
# A sheet is read as text for search and answers, not as a database: past these, the rest is left out
# and the document says so. The column bound also keeps a sheet that claims 16,384 columns from
# becoming rows of thousands of empty cells.
MAX_ROWS = 2_000
MAX_COLUMNS = 100


def _read(data: bytes, _archive: zipfile.ZipFile | None, found: Found) -> Iterator[Block]:
    """One Block per worksheet, path (sheet name,) under the workbook's title."""
    workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    has_data = False
    try:
        found.title = workbook.properties.title
        for sheet in workbook.worksheets:  # chart sheets have no cells and are not listed here
            rows, cut_rows, cut_columns = _rows(sheet.iter_rows(max_col=MAX_COLUMNS + 1, values_only=True))
            table = markdown_table(_trim_columns(rows))
            has_data = has_data or bool(table)
            found.warnings.extend(_warnings(str(sheet.title), cut_rows, cut_columns))
            yield Block(path=(str(sheet.title),), body=table or EMPTY_SHEET)
    finally:
        workbook.close()  # read-only mode keeps the archive open until closed
    if not has_data:
        raise no_text(WHAT)


FORMAT = StructuredFormat(WHAT, _read)
parse_xlsx = parser_for(FORMAT)


def _rows(values: Iterable[tuple[object, ...]]) -> tuple[list[list[str]], bool, bool]:
    """Non-empty rows as texts (at most MAX_ROWS, MAX_COLUMNS cells), and whether rows or columns
    were cut. Empty rows are dropped wherever they are: they carry nothing in a Markdown table."""
    rows: list[list[str]] = []
    cut_columns = False
    for row in values:
        texts = [_text(value) for value in row]
        if not any(texts):
            continue
        if len(rows) == MAX_ROWS:
            return rows, True, cut_columns
        cut_columns = cut_columns or any(texts[MAX_COLUMNS:])
        rows.append(texts[:MAX_COLUMNS])
    return rows, False, cut_columns


def _trim_columns(rows: list[list[str]]) -> list[list[str]]:
    """Rows without the columns that are empty in every row."""
    width = max((len(row) for row in rows), default=0)
    kept = [column for column in range(width) if any(column < len(row) and row[column] for row in rows)]
    return [[row[column] if column < len(row) else "" for column in kept] for row in rows]


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"  # as Excel shows them
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 3.0 is shown as 3
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()  # a date cell comes back as a datetime at midnight
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return " ".join(str(value).split())


def _warnings(sheet: str, cut_rows: bool, cut_columns: bool) -> list[str]:
    warnings = []
    if cut_rows:
        warnings.append(f"sheet {sheet!r}: only its first {MAX_ROWS:,} rows with data were kept")
    if cut_columns:
        warnings.append(f"sheet {sheet!r}: only its first {MAX_COLUMNS:,} columns were kept")
    return warnings

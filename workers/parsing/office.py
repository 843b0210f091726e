"""What the PowerPoint, Word and Excel parsers share: the title rule, Markdown tables, and turning a format
library's exceptions on a broken file into a ParseError the user can read.

Plain helpers rather than a library: each is a few lines, and the format libraries do the reading."""

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePath

from workers.parsing.types import ParseError

# A library's own message can be a page of lxml context; the user needs its gist, not all of it.
_REASON_MAX_CHARS = 200
# python-pptx and python-docx name the stream in their messages ("file '<_io.BytesIO object at 0x…>'").
_STREAM_NAME = re.compile(r"file '<_io\.BytesIO object at 0x[0-9a-fA-F]+>'")


def document_title(given: str | None, core_title: object, filename: str) -> str:
    """The title given with the upload, else the file's own (core properties), else the file name's stem."""
    for candidate in (given, core_title):
        if isinstance(candidate, str) and candidate.strip():
            return " ".join(candidate.split())
    return PurePath(filename).stem or filename


def no_text(what: str) -> ParseError:
    return ParseError(f"No text was found in this {what}.")


@contextmanager
def library_errors(what: str) -> Iterator[None]:
    """Any exception a format library raises on a broken file becomes "The {what} is damaged: ...".
    MemoryError passes: the parse child reports it as the memory bound it is, not as a damaged file."""
    try:
        yield
    except (ParseError, MemoryError):
        raise
    except Exception as error:  # python-pptx/docx and openpyxl raise KeyError, ValueError, lxml errors...
        reason = _STREAM_NAME.sub("the file", " ".join(str(error).split())) or type(error).__name__
        if len(reason) > _REASON_MAX_CHARS:
            reason = reason[: _REASON_MAX_CHARS - 1] + "…"
        raise ParseError(f"The {what} is damaged and could not be read: {reason}") from error


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """The first row as the header; rows padded to one width; `|` escaped and line breaks folded so a
    cell never ends its row early."""
    width = max((len(row) for row in rows), default=0)
    if width == 0:
        return ""
    lines: list[str] = []
    for index, row in enumerate(rows):
        cells = [_cell(text) for text in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())

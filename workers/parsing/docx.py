"""Word (.docx) into Markdown sections delimited by the document's heading styles.

python-docx: the maintained pure-Python reader of the Word format; it gives paragraphs with their style
and tables in body order (iter_inner_content), which is all the structure needed here. Only the body is
walked, so headers, footers, comments and footnotes stay out. Word has no fixed pages: page is None."""

import io
import re
import zipfile
from collections.abc import Iterator

from docx import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from workers.parsing.office import markdown_table, no_text
from workers.parsing.structured import Block, Found, StructuredFormat, parser_for

WHAT = "Word file"
_HEADING = re.compile(r"heading ([1-9])", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"(\d+)\s*$")
_MAX_STYLE_DEPTH = 10
_CODE_STYLES = ("code", "source", "html preformatted", "preformatted")
_MONOSPACE = ("courier", "consolas", "menlo", "monaco", "mono", "lucida console", "lucida sans typewriter")


def _read(data: bytes, _archive: zipfile.ZipFile | None, found: Found) -> Iterator[Block]:
    """One Block per heading (path = the heading stack) plus the text before the first."""
    document = Document(io.BytesIO(data))
    body = _Body()
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            body.paragraph(item)
        elif isinstance(item, Table):
            body.table(item)
        yield from body.take()  # the sections done so far: the driver checks the budget as they come
    body.finish()
    yield from body.take()
    if not body.has_text:
        raise no_text(WHAT)
    found.title = document.core_properties.title or body.title_paragraph


FORMAT = StructuredFormat(WHAT, _read)
parse_docx = parser_for(FORMAT)


class _Body:
    """Walks the body's paragraphs and tables in order, cutting a Block at each heading."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.stack: list[tuple[int, str]] = []  # (level, heading text); Title is level 0
        # Markdown of the current section, each part with the separator before it: a blank line, or a
        # newline between the items of one list (joined once at the end: a long list stays linear).
        self.parts: list[str] = []
        self.list_open = False  # the last part is a list item: the next item goes on the next line
        self.code: list[str] = []  # consecutive code paragraphs, fenced together
        self.title_paragraph = ""  # a Title-styled paragraph before any other text: the document's title
        self.seen_text = False
        self.has_text = False  # a section with a heading or any text was cut: the file is not empty

    def paragraph(self, paragraph: Paragraph) -> None:
        style = _style_name(paragraph)
        text = paragraph.text
        if _is_code(paragraph, style):
            if text.strip() or self.code:  # blank lines before a listing are no part of it
                self.code.append(text.rstrip())
            return
        if not text.strip():
            if self.code:  # a blank line inside a code listing, kept if the listing goes on
                self.code.append("")
            return
        self._close_code()
        level = _heading_level(paragraph)
        if level is not None:
            self._heading(level, " ".join(text.split()))
            return
        self.seen_text = True
        depth = _list_depth(paragraph, style)
        if depth is None:
            self._add(text.strip())
        else:
            self._add("  " * depth + "- " + " ".join(text.split()), list_item=True)

    def table(self, table: Table) -> None:
        self._close_code()
        self.seen_text = True
        self._add(markdown_table(_table_rows(table)))

    def finish(self) -> None:
        self._close_code()
        self._flush()

    def take(self) -> list[Block]:
        done, self.blocks = self.blocks, []
        return done

    def _heading(self, level: int, text: str) -> None:
        if level == 0 and not self.seen_text and not self.stack and not self.title_paragraph:
            self.title_paragraph = text
        self.seen_text = True
        self._flush()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, text))

    def _add(self, markdown: str, *, list_item: bool = False) -> None:
        if not markdown.strip():
            return
        if self.parts:
            self.parts.append("\n" if list_item and self.list_open else "\n\n")
        self.parts.append(markdown)
        self.list_open = list_item

    def _close_code(self) -> None:
        while self.code and not self.code[-1].strip():
            self.code.pop()
        if self.code:
            listing = "\n".join(self.code)
            fence = "`" * max(3, _longest_backtick_run(listing) + 1)  # a fence the code cannot close
            self._add(f"{fence}\n{listing}\n{fence}")
        self.code = []

    def _flush(self) -> None:
        """Ends the current section: a heading keeps its Block even with no body (it is text itself)."""
        path = tuple(text for _, text in self.stack)
        if path or self.parts:
            block = Block(path=path, body="".join(self.parts))
            self.has_text = self.has_text or bool(block.path or block.body.strip())
            self.blocks.append(block)
        self.parts = []
        self.list_open = False


def _style_name(paragraph: Paragraph) -> str:
    style = paragraph.style
    return str(style.name or "") if style is not None else ""


def _heading_level(paragraph: Paragraph) -> int | None:
    """0 for Title, N for Heading N, also through a custom style based on one ("Chapter" on Heading 1)."""
    style = paragraph.style
    for _ in range(_MAX_STYLE_DEPTH):  # bounded: a hostile styles.xml can chain its styles in a loop
        if style is None:
            return None
        name = str(style.name or "").strip()
        if name.lower() == "title":
            return 0
        match = _HEADING.fullmatch(name)
        if match:
            return int(match.group(1))
        style = style.base_style
    return None


def _list_depth(paragraph: Paragraph, style: str) -> int | None:
    """0 for a top-level item, None for no list item: numbering on the paragraph (numId 0 switches
    numbering off) or a list style ("List Bullet 2" is one level down)."""
    properties = paragraph._p.pPr
    numbering = properties.find(qn("w:numPr")) if properties is not None else None
    if numbering is not None:
        number_id, level = numbering.find(qn("w:numId")), numbering.find(qn("w:ilvl"))
        if number_id is not None and number_id.get(qn("w:val")) == "0":
            return None
        value = level.get(qn("w:val"), "0") if level is not None else "0"
        return int(value) if value.isdigit() else 0
    if "list" not in style.lower():
        return None
    number = _TRAILING_NUMBER.search(style)
    return max(int(number.group(1)) - 1, 0) if number else 0


def _is_code(paragraph: Paragraph, style: str) -> bool:
    """A code style, or every run with text in a monospace font (set on the run or its style)."""
    if any(name in style.lower() for name in _CODE_STYLES):
        return True
    fonts = [run.font.name or _style_font(paragraph) for run in paragraph.runs if run.text.strip()]
    return bool(fonts) and all(_monospace(font) for font in fonts)


def _style_font(paragraph: Paragraph) -> str | None:
    style = paragraph.style
    for _ in range(_MAX_STYLE_DEPTH):  # a style without its own font takes its base style's
        if style is None:
            return None
        if style.font.name:
            return str(style.font.name)
        style = style.base_style
    return None


def _monospace(font: str | None) -> bool:
    return font is not None and any(name in font.lower() for name in _MONOSPACE)


def _table_rows(table: Table) -> list[list[str]]:
    """Cell texts; a merged cell's text once, at its origin, not in every grid cell it covers."""
    # The cell elements already rendered, by id: held in the dict, so no id is reused meanwhile.
    seen: dict[int, object] = {}
    rows: list[list[str]] = []
    for row in table.rows:
        texts: list[str] = []
        for cell in row.cells:
            element = cell._tc
            texts.append("" if id(element) in seen else cell.text)
            seen[id(element)] = element
        rows.append(texts)
    return rows


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)

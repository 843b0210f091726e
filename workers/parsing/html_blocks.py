"""An (X)HTML element tree into Blocks (workers/parsing/structured.py): shared by web pages and e-books.

h1-h6 open sections (a heading stack: an h3 after an h2 nests under it, an h2 closes both), paragraphs
become Markdown paragraphs, list items "- " lines (indented per nesting level), `<pre>` a ``` fence that
keeps the code's text and newlines exactly, data tables Markdown tables. Tables that hold headings, code or
other tables are page layout, not data: they are walked like any other container.

The walk is lxml's iterwalk (iterative, in C), not recursion: a page nested thousands of elements deep
cannot exhaust Python's stack. Tags are compared by local name, so an XHTML tree parsed as XML (tags in
the XHTML namespace) walks like one parsed by the HTML parser."""

import re

from lxml import etree

from workers.parsing.structured import Block

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Never text a reader sees as the document's content.
_SKIPPED = frozenset({
    "head", "title", "script", "style", "noscript", "template", "meta", "link", "button", "select",
    "option", "textarea", "input", "iframe", "object", "embed", "canvas", "svg",
})  # fmt: skip
# Elements that end the paragraph before them and start a new one.
_BLOCK = frozenset({
    "html", "body", "p", "div", "section", "article", "main", "header", "footer", "aside", "nav",
    "blockquote", "ul", "ol", "li", "dl", "dt", "dd", "figure", "figcaption", "address", "hr", "form",
    "fieldset", "details", "summary", "center", "table", "thead", "tbody", "tfoot", "tr", "td", "th",
    "caption", "hgroup", "legend",
})  # fmt: skip
_INLINE_CODE = frozenset({"code", "kbd", "samp", "tt"})
_LIST = frozenset({"ul", "ol"})
_LAYOUT_INSIDE_TABLE = frozenset({*_HEADINGS, "pre", "table"})
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
# A line that Markdown would read as a fence or a heading, which it is not in the page.
_MARKDOWN_LINE_START = re.compile(r"^(```|~~~|#)")


def local_name(element: etree._Element) -> str:
    """The tag without its namespace: "p" for <p> and for <{http://www.w3.org/1999/xhtml}p>; "" for
    comments and processing instructions (their tag is not a string)."""
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def normalized(text: str) -> str:
    return " ".join(text.split())


def element_text(element: etree._Element) -> str:
    """The element's text, whitespace collapsed (itertext, which a comment or PI would not break)."""
    return normalized("".join(element.itertext()))


def blocks_from_tree(root: etree._Element, *, base_path: tuple[str, ...] = ()) -> list[Block]:
    """The Blocks of `root`'s content. Every path starts with `base_path` (an e-book chapter's title);
    a heading that opens the content and repeats that title (or contains it, or is contained in it) is
    the title itself, not a section under it."""
    walker = _Walker(root, base_path)
    events = etree.iterwalk(root, events=("start", "end"))
    for event, element in events:
        if event == "start":
            if walker.start(element):
                events.skip_subtree()  # its "end" event still comes, for the tail
        else:
            walker.end(element)
    return walker.finish()


class _Walker:
    def __init__(self, root: etree._Element, base_path: tuple[str, ...]) -> None:
        self.root = root
        self.base_path = base_path
        self.headings: list[tuple[int, str]] = []
        self.parts: list[tuple[str, bool]] = []  # (Markdown, is a list line) of the open section
        self.inline: list[str] = []
        self.prefix = ""  # the open list item's "- " (indented), or its continuation indent
        self.list_depth = 0
        self.blocks: list[Block] = []
        self.section_open = bool(base_path)  # a section with a heading, shown even with no body

    def start(self, element: etree._Element) -> bool:
        """Handles the element's start; True when its subtree was consumed whole (skip it)."""
        tag = local_name(element)
        if not tag or tag in _SKIPPED:
            return True
        if tag in _HEADINGS:
            self.flush()
            self.open_section(_HEADINGS[tag], element_text(element))
            return True
        if tag == "pre":
            self.flush()
            self.add_code(element)
            return True
        if tag == "table" and not _is_layout_table(element):
            self.flush()
            self.add(_markdown_table(element), False)
            return True
        if tag in _INLINE_CODE:
            code = element_text(element)
            if code:
                fence = "``" if "`" in code else "`"
                self.inline.append(f"{fence}{code}{fence}")
            return True
        if tag == "br":
            self.inline.append("\n")
        elif tag in _BLOCK:
            self.flush()
            if tag in _LIST:
                self.list_depth += 1
            elif tag == "li":
                self.prefix = "  " * max(self.list_depth - 1, 0) + "- "
        if element.text:
            self.inline.append(element.text)
        return False

    def end(self, element: etree._Element) -> None:
        tag = local_name(element)
        if tag in _BLOCK and tag not in _SKIPPED:
            self.flush()
            if tag in _LIST:
                self.list_depth = max(self.list_depth - 1, 0)
            if tag in _LIST or tag == "li":
                self.prefix = ""
        if element.tail and element is not self.root:  # the root's tail lies outside the content
            self.inline.append(element.tail)

    def flush(self) -> None:
        """The pending inline text as one paragraph (or list line)."""
        text = "".join(self.inline)
        self.inline.clear()
        lines = [_escaped(normalized(line)) for line in text.split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            return
        if self.list_depth and self.prefix:
            indent = " " * len(self.prefix)
            self.add("\n".join([self.prefix + lines[0], *(indent + line for line in lines[1:])]), True)
            self.prefix = indent  # the item's later paragraphs continue it, without another "- "
        else:
            self.add("\n".join(lines), False)

    def add(self, markdown: str, is_list_line: bool) -> None:
        if markdown:
            self.parts.append((markdown, is_list_line))

    def add_code(self, pre: etree._Element) -> None:
        code = _pre_text(pre)
        if code.startswith("\n"):  # HTML drops the newline right after <pre>
            code = code[1:]
        code = code.rstrip()
        if not code.strip():
            return
        longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
        fence = "`" * max(3, longest + 1)
        self.add(f"{fence}{_language(pre)}\n{code}\n{fence}", False)

    def open_section(self, level: int, title: str) -> None:
        if not title:
            return
        if not self.headings and not self.parts and self.base_path and _same_title(title, self.base_path[-1]):
            return  # the chapter's own heading ("Ownership" for TOC entry "1. Ownership"), already its title
        self.emit()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title))
        self.section_open = True

    def emit(self) -> None:
        if self.parts or (self.section_open and self.path):
            body = ""
            for index, (markdown, is_list_line) in enumerate(self.parts):
                joined = is_list_line and index > 0 and self.parts[index - 1][1]
                body += ("\n" if joined else "\n\n" if index else "") + markdown
            self.blocks.append(Block(path=self.path, body=body))
        self.parts = []
        self.section_open = False

    @property
    def path(self) -> tuple[str, ...]:
        return self.base_path + tuple(title for _, title in self.headings)

    def finish(self) -> list[Block]:
        self.flush()
        self.emit()
        return self.blocks


def _same_title(heading: str, title: str) -> bool:
    heading_key, title_key = (re.sub(r"\W+", "", text).casefold() for text in (heading, title))
    return bool(heading_key) and (heading_key in title_key or title_key in heading_key)


def _escaped(line: str) -> str:
    return "\\" + line if _MARKDOWN_LINE_START.match(line) else line


def _pre_text(pre: etree._Element) -> str:
    """The code exactly as shown: text and tails in order, a <br> as a newline (some sites write
    code lines that way), highlighting spans contributing their text."""
    pieces: list[str] = []
    for event, element in etree.iterwalk(pre, events=("start", "end")):
        if event == "start":
            if local_name(element) == "br":
                pieces.append("\n")
            if element.text:
                pieces.append(element.text)
        elif element.tail and element is not pre:
            pieces.append(element.tail)
    return "".join(pieces)


def _language(pre: etree._Element) -> str:
    for element in (pre, *pre.iterchildren()):
        match = _LANGUAGE.search(str(element.get("class") or ""))
        if match:
            return match.group(1)
    return ""


def _is_layout_table(table: etree._Element) -> bool:
    return any(local_name(element) in _LAYOUT_INSIDE_TABLE for element in table.iterdescendants())


def _markdown_table(table: etree._Element) -> str:
    rows: list[list[str]] = []
    for row in table.iterdescendants():
        if local_name(row) != "tr":
            continue
        cells: list[str] = []
        for cell in row:
            if local_name(cell) in ("td", "th"):
                cells.append(element_text(cell).replace("|", "\\|"))
                cells.extend("" for _ in range(_colspan(cell) - 1))
        if cells:
            rows.append(cells)
    if not any(any(cells) for cells in rows):
        return ""
    width = max(len(cells) for cells in rows)
    lines = [
        "| " + " | ".join(cells + [""] * (width - len(cells))) + " |"
        for cells in rows
    ]  # fmt: skip
    lines.insert(1, "| " + " | ".join(["---"] * width) + " |")
    return "\n".join(lines)


def _colspan(cell: etree._Element) -> int:
    try:
        return min(max(int(cell.get("colspan") or 1), 1), 50)
    except ValueError:
        return 1

"""Cutting one section that is too long into units for the packer, coarsest boundary first.

Markdown: block tokens (headings, paragraphs, code, lists, quotes, tables); a block that fits stays
whole, a list too long is cut between items (then inside an item, between its blocks), a code block
too long between lines (re-fenced), a paragraph between sentences. PDF and plain text: blank-line
paragraphs, then sentences. Below that: whitespace, then a hard cut.
"""

import re
from dataclasses import dataclass, field

from workers.chunking_pack import SENTENCE_END, Packer, Unit
from workers.parsing.markdown import markdown_parser
from workers.parsing.text import line_starts, trim_span

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_CONTAINERS = {"bullet_list", "ordered_list", "list_item", "blockquote"}
_CODE = {"fence", "code_block"}


@dataclass
class _Node:
    type: str
    first_line: int
    end_line: int  # exclusive
    markup: str = ""
    info: str = ""
    children: list["_Node"] = field(default_factory=list)


class SectionSplitter:
    def __init__(self, text: str, packer: Packer, *, max_chars: int, min_chars: int) -> None:
        self.text = text
        self.packer = packer
        self.max_chars = max_chars
        # Filling a nearly full chunk with a sliver of the next block gives a useless fragment.
        self.min_room = min(min_chars, max_chars // 2)

    def markdown(self, start: int, end: int) -> None:
        starts = [start + offset for offset in line_starts(self.text[start:end])]
        self._offsets = starts + [end]  # line i runs from _offsets[i] to _offsets[i+1]
        roots = _block_tree(self.text[start:end])
        self._children(start, end, roots, keep_gaps=True)

    def plain(self, start: int, end: int) -> None:
        position = start
        for match in _PARAGRAPH_BREAK.finditer(self.text, start, end):
            self._paragraph(position, match.start())
            position = match.end()
        self._paragraph(position, end)

    # Markdown blocks ---------------------------------------------------------------------------

    def _span(self, node: _Node, *, keep_indent: bool = False) -> tuple[int, int]:
        start, end = trim_span(self.text, self._line(node.first_line), self._line(node.end_line))
        if not keep_indent:
            while start < end and self.text[start] in " \t":
                start += 1  # a nested item's indentation would read as a code block on its own
        return start, end

    def _line(self, index: int) -> int:
        return self._offsets[min(index, len(self._offsets) - 1)]

    def _children(self, start: int, end: int, nodes: list[_Node], *, keep_gaps: bool = False) -> None:
        # At the top level, text no token covers (link reference definitions) is kept as lines; inside
        # containers the gaps are only markers ("-", ">") that the chunk slice carries anyway.
        cursor = start
        for node in nodes:
            node_start = self._line(node.first_line)
            if keep_gaps and node_start > cursor:
                self._lines(cursor, node_start)
            self._node(node)
            cursor = max(cursor, self._line(node.end_line))
        if keep_gaps and cursor < end:
            self._lines(cursor, end)

    def _node(self, node: _Node) -> None:
        start, end = self._span(node, keep_indent=node.type == "code_block")
        if start >= end:
            return
        if end - start <= self.max_chars:
            self.packer.add(Unit(start, end, code=node.type in _CODE))
        elif node.type == "fence":
            self._fence(node, start, end)
        elif node.type == "code_block":
            self._lines(start, end, code=True)
        elif node.type in _CONTAINERS and node.children:
            self._children(start, end, node.children)
        elif node.type == "paragraph":
            self._sentences(start, end)
        else:  # tables, HTML, headings, blocks too deep for the parser to tokenise
            self._lines(start, end)

    def _fence(self, node: _Node, start: int, end: int) -> None:
        """Code split between lines; every piece is a complete fenced block of the same language."""
        opening_line = self._line(node.first_line)
        indent = self.text[opening_line:start]
        reopen = f"{indent}{node.markup}{node.info}\n"
        close = f"\n{indent}{node.markup}"
        bounds = [(s, e) for s, e in _line_bounds(self.text, start, end)]
        position, first = 0, True
        while position < len(bounds):
            prefix = "" if first else reopen
            room = self.packer.room(bounds[position][0]) if first else self.max_chars
            if first and room < self.min_room:
                self.packer.flush()
                room = self.max_chars
            last = position
            while last + 1 < len(bounds):
                closes = last + 1 == len(bounds) - 1
                size = len(prefix) + bounds[last + 1][1] - bounds[position][0] + (0 if closes else len(close))
                if size > room:
                    break
                last += 1
            done = last == len(bounds) - 1
            piece_start, piece_end = bounds[position][0], bounds[last][1]
            if len(prefix) + piece_end - piece_start + (0 if done else len(close)) > room:
                # One line longer than a chunk: cut the line itself, each piece still fenced.
                budget = max(room - len(prefix) - len(close), 1)
                for cut_start in range(piece_start, piece_end, budget):
                    cut_end = min(cut_start + budget, piece_end)
                    closes = done and cut_end == piece_end
                    self.packer.add(Unit(cut_start, cut_end, True, prefix, "" if closes else close))
                    prefix = reopen
            else:
                self.packer.add(Unit(piece_start, piece_end, True, prefix, "" if done else close))
            position, first = last + 1, False

    # Text ----------------------------------------------------------------------------------------

    def _lines(self, start: int, end: int, *, code: bool = False) -> None:
        for line_start, line_end in _line_bounds(self.text, start, end):
            if line_end - line_start <= self.max_chars:
                self.packer.add(Unit(line_start, line_end, code=code))
            else:
                self._words(line_start, line_end, code=code)

    def _paragraph(self, start: int, end: int) -> None:
        start, end = trim_span(self.text, start, end)
        if start >= end:
            return
        if end - start <= self.max_chars:
            self.packer.add(Unit(start, end))
        else:
            self._sentences(start, end)

    def _sentences(self, start: int, end: int) -> None:
        position = start
        for match in SENTENCE_END.finditer(self.text, start, end):
            self._sentence(position, match.end(1))
            position = match.end()
        self._sentence(position, end)

    def _sentence(self, start: int, end: int) -> None:
        start, end = trim_span(self.text, start, end)
        if start >= end:
            return
        if end - start <= self.max_chars:
            self.packer.add(Unit(start, end))
        else:
            self._words(start, end)

    def _words(self, start: int, end: int, *, code: bool = False) -> None:
        """Greedy cuts at the last whitespace that fits, else a hard cut at the limit."""
        text = self.text
        position = start
        while position < end:
            room = self.packer.room(position)
            if room < self.min_room:
                self.packer.flush()
                room = self.max_chars
            if end - position <= room:
                self.packer.add(Unit(position, end, code=code))
                return
            limit = position + room
            cut = max(text.rfind(" ", position + 1, limit + 1), text.rfind("\t", position + 1, limit + 1),
                      text.rfind("\n", position + 1, limit + 1))
            if cut <= position:
                cut = limit
            piece_start, piece_end = trim_span(text, position, cut)
            if piece_start < piece_end:
                self.packer.add(Unit(piece_start, piece_end, code=code))
            position = cut
            while position < end and text[position].isspace():
                position += 1


def _line_bounds(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Non-blank lines of text[start:end] as (start, end without trailing whitespace)."""
    bounds: list[tuple[int, int]] = []
    position = start
    while position < end:
        newline = text.find("\n", position, end)
        line_end = end if newline < 0 else newline
        stripped_end = line_end
        while stripped_end > position and text[stripped_end - 1] in " \t":
            stripped_end -= 1
        if stripped_end > position:
            bounds.append((position, stripped_end))
        position = line_end + 1
    return bounds


def _block_tree(source: str) -> list[_Node]:
    """Top-level blocks with their nested blocks, built without recursion (deep input is common)."""
    roots: list[_Node] = []
    stack: list[_Node] = []
    for token in markdown_parser().parse(source):
        if token.nesting == -1:
            if stack:
                stack.pop()
            continue
        if not token.block or token.type == "inline":
            continue
        if token.map is None:
            if token.nesting == 1:
                stack.append(_Node(token.type, 0, 0))  # table parts have no map; a detached placeholder
            continue
        node = _Node(token.type.removesuffix("_open"), token.map[0], token.map[1], token.markup, token.info)
        (stack[-1].children if stack else roots).append(node)
        if token.nesting == 1:
            stack.append(node)
    return roots

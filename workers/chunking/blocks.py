"""Cutting one section that is too long into units for the packer, coarsest boundary first.

Markdown: block tokens (headings, paragraphs, code, lists, quotes, tables); a block that fits stays
whole, a list too long is cut between items (then inside an item, between its blocks), a code block
too long between lines (re-fenced), a paragraph between sentences. PDF and plain text: blank-line
paragraphs, then sentences. Below that: whitespace, then a hard cut.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from workers.chunking.pack import SENTENCE_END, Packer, Unit
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
        self._offsets = [*starts, end]  # line i runs from _offsets[i] to _offsets[i+1]
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
        indent = self.text[self._line(node.first_line) : start]  # "   " in a list item, "> " in a quote
        reopen = f"{indent}{node.markup}{node.info}\n"
        close = f"\n{indent}{node.markup}"
        if len(reopen) + len(close) > self.max_chars // 2:  # absurdly small chunks: plain lines instead
            self._lines(start, end, code=True)
            return
        bounds = _line_bounds(self.text, start, end)
        closing = self.text[bounds[-1][0] : bounds[-1][1]].strip(" \t>")
        # An unclosed fence runs to the end of its container; its last piece gets a closing line too.
        closed = len(bounds) > 1 and closing.startswith(node.markup) and not closing.strip(node.markup[0])
        position, first = 0, True
        while position < len(bounds):
            prefix = "" if first else reopen
            room = self.packer.room(bounds[position][0]) if first else self.max_chars
            if first and room < self.min_room:
                self.packer.flush()
                room = self.max_chars
            last = position
            while last + 1 < len(bounds):
                suffix = "" if closed and last + 2 == len(bounds) else close
                if len(prefix) + bounds[last + 1][1] - bounds[position][0] + len(suffix) > room:
                    break
                last += 1
            if first and last == 0 and len(bounds) > 1:  # the opening fence alone would be an empty block
                fits_fresh = bounds[1][1] - bounds[0][0] + len(close) <= self.max_chars
                if fits_fresh and room < self.max_chars:
                    self.packer.flush()
                    continue  # retry in a fresh chunk
                last = 1  # the first code line is longer than a chunk: cut it below, fence included
            suffix = "" if closed and last + 1 == len(bounds) else close
            piece_start, piece_end = bounds[position][0], bounds[last][1]
            if len(prefix) + piece_end - piece_start + len(suffix) <= room:
                self.packer.add(Unit(piece_start, piece_end, True, prefix, suffix))
            else:
                if closed and last + 2 == len(bounds):
                    piece_end, suffix, last = bounds[-1][1], "", last + 1  # take the closing line along
                self._cut_code_line(piece_start, piece_end, room, prefix, reopen, suffix, close)
            position, first = last + 1, False

    def _cut_code_line(
        self, start: int, end: int, room: int, prefix: str, reopen: str, suffix: str, close: str
    ) -> None:
        """A code line longer than a chunk, cut hard; every piece fenced (prefix/suffix)."""
        position = start
        while position < end:
            budget = max(room - len(prefix) - len(close), 1)
            cut = min(position + budget, end)
            if not suffix and end - cut <= len(close):
                cut = end  # only the closing line would be left: no empty block
            self.packer.add(Unit(position, cut, True, prefix, suffix if cut == end else close))
            position, prefix, room = cut, reopen, self.max_chars

    # Text ----------------------------------------------------------------------------------------

    def _lines(self, start: int, end: int, *, code: bool = False) -> None:
        for line_start, line_end in _line_bounds(self.text, start, end):
            if line_end - line_start <= self.max_chars:
                self.packer.add(Unit(line_start, line_end, code=code))
            else:
                self._words(line_start, line_end, code=code)

    def _paragraph(self, start: int, end: int) -> None:
        self._whole_or_split(start, end, self._sentences)

    def _sentences(self, start: int, end: int) -> None:
        position = start
        for match in SENTENCE_END.finditer(self.text, start, end):
            self._whole_or_split(position, match.end(1), self._words)
            position = match.end()
        self._whole_or_split(position, end, self._words)

    def _whole_or_split(self, start: int, end: int, split: Callable[[int, int], None]) -> None:
        """The trimmed span as one unit when it fits, else handed to `split` for finer cuts."""
        start, end = trim_span(self.text, start, end)
        if start >= end:
            return
        if end - start <= self.max_chars:
            self.packer.add(Unit(start, end))
        else:
            split(start, end)

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
            cut = max(
                text.rfind(" ", position + 1, limit + 1),
                text.rfind("\t", position + 1, limit + 1),
                text.rfind("\n", position + 1, limit + 1),
            )
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

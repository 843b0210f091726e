"""The mind map's tree, from the sections' chunks alone: the project (or one document) at the root, its
documents, then their headings as the chunks' section paths nest them. Every node names the chunks under
it, so every node leads to passages; a heading with no chunk under it never becomes a node.

A long book has more headings than a map can show at once (a 288-page book's outline has hundreds):
levels are kept from the top while the whole map fits MAX_NODES, and the headings below the last kept
level are folded into their ancestor, whose passages then include theirs (benchmarks/mindmap.py prints
what that gives for real books). Only when the documents alone are too many are the last ones left out."""

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from uuid import UUID

from core.store.content.outline import SectionChunks
from core.store.content.refs import Location, location_of

MAX_NODES = 300  # the whole map, concepts included: what a phone can still pan through
MAX_HEADING_DEPTH = 4  # deeper headings are folded even when they would fit
PASSAGES_PER_NODE = 6  # the chunks a node names (its own first, then its descendants'); the rest are counted
MAX_CONCEPTS = 12  # concept nodes (backend/mindmap/concepts.py)
CONCEPT_SLOTS = MAX_CONCEPTS + 1  # kept free for them and their group node


@dataclass(frozen=True, slots=True)
class Passage:
    chunk_id: int
    document_id: UUID


@dataclass(frozen=True, slots=True)
class MapNode:
    id: str
    parent: str | None
    kind: str  # project, document, section, concepts (the group), concept
    label: str
    document_id: UUID | None
    section_path: list[str]
    page_start: int | None
    page_end: int | None
    location: Location | None
    passages: list[Passage]
    chunk_count: int


@dataclass
class Branch:
    """A document (path ()) or one of its headings, with the chunks whose path ends at it."""

    label: str
    path: tuple[str, ...]
    document_id: UUID
    source_type: str
    direct: list[int] = field(default_factory=list)
    children: dict[str, "Branch"] = field(default_factory=dict)
    pages: list[int] = field(default_factory=list)

    def chunk_ids(self) -> Iterator[int]:
        """Its own chunks first, then its descendants' in reading order."""
        yield from self.direct
        for child in self.children.values():
            yield from child.chunk_ids()

    def page_range(self) -> tuple[int | None, int | None]:
        pages = list(self._pages())
        return (min(pages), max(pages)) if pages else (None, None)

    def _pages(self) -> Iterator[int]:
        yield from self.pages
        for child in self.children.values():
            yield from child._pages()

    def walk(self, depth: int = 0) -> Iterator[tuple["Branch", int]]:
        yield self, depth
        for child in self.children.values():
            yield from child.walk(depth + 1)


def documents_of(rows: list[SectionChunks]) -> list[Branch]:
    """Each document's heading tree, documents and headings in the order the rows give."""
    documents: dict[UUID, Branch] = {}
    for row in rows:
        node = documents.setdefault(
            row.document_id, Branch(row.document_title, (), row.document_id, row.source_type)
        )
        for heading in row.section_path:
            child = node.children.get(heading)
            if child is None:
                child = node.children[heading] = Branch(
                    heading, (*node.path, heading), row.document_id, row.source_type
                )
            node = child
        node.direct.extend(row.chunk_ids)
        node.pages.extend(page for page in (row.page_start, row.page_end) if page is not None)
    return [_lift_single_heading(document) for document in documents.values()]


def _lift_single_heading(document: Branch) -> Branch:
    """A document whose every chunk sits under one top heading (a chapter file's own title) is shown as
    that heading: one node instead of a chain of two, and a level more of its sections fits."""
    if document.direct or len(document.children) != 1:
        return document
    [heading] = document.children.values()
    return replace(heading, path=document.path)


def kept_depth(documents: list[Branch], budget: int) -> int:
    """The deepest heading level such that every heading down to it fits in `budget` nodes."""
    per_level: dict[int, int] = {}
    for document in documents:
        for _, depth in document.walk():
            per_level[depth] = per_level.get(depth, 0) + 1
    kept, used = 0, 0
    for depth in range(1, MAX_HEADING_DEPTH + 1):
        used += per_level.get(depth, 0)
        if used > budget:
            break
        kept = depth
    return kept


@dataclass
class Tree:
    nodes: list[MapNode]
    node_of_chunk: dict[int, str]  # every chunk -> the node that shows it (a folded heading's ancestor)
    document_of_chunk: dict[int, UUID]
    branches: list[tuple[Branch, str]]  # every heading, shown or folded, with the node that shows it
    depth: int  # heading levels shown
    folded: bool  # some headings were folded into their ancestors
    truncated: bool  # some documents were left out


def passages_of(ids: Iterator[int] | list[int], document_of: dict[int, UUID]) -> list[Passage]:
    out: list[Passage] = []
    for chunk_id in ids:
        out.append(Passage(chunk_id, document_of[chunk_id]))
        if len(out) == PASSAGES_PER_NODE:
            break
    return out


def build_tree(documents: list[Branch], *, root: MapNode | None) -> Tree:
    """The nodes under `root` (a project node), or with the one document as the root when it is None."""
    room = MAX_NODES - CONCEPT_SLOTS - (1 if root else 0)
    truncated = len(documents) > room
    documents = documents[:room]
    depth = kept_depth(documents, room - len(documents))
    tree = Tree([], {}, {}, [], depth, False, truncated)
    for index, document in enumerate(documents):
        _emit(tree, document, f"d{index}", root.id if root else None, 0)
    if root is not None and tree.nodes:  # a project with nothing indexed has no map, not a bare root
        firsts = [node.passages[0] for node in tree.nodes if node.kind == "document"]
        counts = sum(node.chunk_count for node in tree.nodes if node.kind == "document")
        tree.nodes.insert(0, replace(root, passages=firsts[:PASSAGES_PER_NODE], chunk_count=counts))
    return tree


def _emit(tree: Tree, branch: Branch, node_id: str, parent: str | None, level: int) -> None:
    ids = list(branch.chunk_ids())
    if not ids:  # a node leads to passages, or is not drawn
        return
    fold = level == tree.depth and bool(branch.children)
    tree.folded |= fold
    for chunk_id in ids if fold else branch.direct:
        tree.node_of_chunk[chunk_id] = node_id
    for chunk_id in ids:
        tree.document_of_chunk[chunk_id] = branch.document_id
    if level:
        tree.branches.append((branch, node_id))
    if fold:
        tree.branches.extend((below, node_id) for below, depth in branch.walk() if depth)
    start, end = branch.page_range()
    tree.nodes.append(
        MapNode(
            id=node_id,
            parent=parent,
            kind="section" if level else "document",
            label=branch.label,
            document_id=branch.document_id,
            section_path=list(branch.path),
            page_start=start,
            page_end=end,
            location=location_of(branch.source_type),
            passages=passages_of(ids, tree.document_of_chunk),
            chunk_count=len(ids),
        )
    )
    if not fold:
        for index, child in enumerate(branch.children.values()):
            _emit(tree, child, f"{node_id}.{index}", node_id, level + 1)

"""The mind map's tree and concepts without a database: a book with more headings than the map holds is
folded level by level and stays within the cap, every node still naming passages (a folded heading's
chunks go to its ancestor), and concepts from heading terms leave the book's frame out."""

from uuid import uuid4

from backend.mindmap.concepts import heading_concepts, links_of
from backend.mindmap.tree import CONCEPT_SLOTS, MAX_NODES, MapNode, build_tree, documents_of
from core.store.content.outline import SectionChunks

ROOT = MapNode("root", None, "project", "course", None, [], None, None, None, [], 0)


def book(chapters: int, sections: int, subsections: int) -> list[SectionChunks]:
    """One PDF-like document: chapters of sections of subsections, two chunks under each subsection."""
    document, rows, next_id = uuid4(), [], 1
    for c in range(chapters):
        chapter = f"Chapter {c + 1}: Topic{c}"
        for s in range(sections):
            for u in range(subsections):
                path = [chapter, f"{c + 1}.{s + 1} Section on subject{c}x{s}", f"Exercise{u} Glossary"]
                ids = [next_id, next_id + 1]
                next_id += 2
                rows.append(
                    SectionChunks(document, "book", "pdf", path, ids, ids[0], c * 10 + s, c * 10 + s + 1)
                )
    return rows


def test_a_long_book_is_folded_to_the_cap_and_every_node_keeps_passages() -> None:
    rows = book(chapters=20, sections=12, subsections=3)  # 20 + 240 + 720 headings, 1,440 chunks
    tree = build_tree(documents_of(rows), root=ROOT)
    assert len(tree.nodes) + CONCEPT_SLOTS <= MAX_NODES
    assert tree.folded and tree.depth == 2 and not tree.truncated
    assert all(node.passages and node.chunk_count >= len(node.passages) for node in tree.nodes)
    every_chunk = {chunk for row in rows for chunk in row.chunk_ids}
    assert set(tree.node_of_chunk) == every_chunk  # each chunk is shown by some node
    section = next(node for node in tree.nodes if node.label.startswith("1.1 "))
    assert section.chunk_count == 6 and section.page_start == 0 and section.page_end == 1


def test_a_document_under_one_title_is_shown_as_that_title() -> None:
    document = uuid4()
    rows = [
        SectionChunks(document, "ch01", "markdown", ["Ownership"], [1], 0, None, None),
        SectionChunks(document, "ch01", "markdown", ["Ownership", "Moves"], [2, 3], 1, None, None),
    ]
    tree = build_tree(documents_of(rows), root=None)
    assert [(node.label, node.kind, node.parent) for node in tree.nodes] == [
        ("Ownership", "document", None),
        ("Moves", "section", "d0"),
    ]
    assert [p.chunk_id for p in tree.nodes[0].passages] == [1, 2, 3]


def test_heading_terms_link_sections_but_not_the_books_frame() -> None:
    document = uuid4()
    headings = ["Mutable References", "Dangling References", "Slices", "Summary", "Other Slices"]
    rows = [
        SectionChunks(document, "t", "markdown", ["Book", h], [i], i, None, None)
        for i, h in enumerate(headings)
    ]
    rows += [
        SectionChunks(
            document, "t", "markdown", ["Book", f"Part {n}", "Summary"], [10 + n], 10 + n, None, None
        )
        for n in range(3)
    ]
    tree = build_tree(documents_of(rows), root=None)
    concepts = {concept.label: concept for concept in heading_concepts(tree.branches)}
    assert set(concepts) == {"References", "Slices"}  # "Summary" recurs whole: the frame
    labels = {node.id: node.label for node in tree.nodes}
    assert {labels[n] for n in links_of(concepts["References"], tree.node_of_chunk)} == {
        "Mutable References",
        "Dangling References",
    }

"""The mind map of a project or of one document, read from what the product already stores: the chunks'
section paths (tree.py) and the plans' sections (concepts.py). No model call and no HTTP: a document the
caller may not see is NotFound. One grouped query over the chunks, one over the plans; the document's own
row is read only when it has no chunks, to tell "not indexed yet" from "not there"."""

from dataclasses import dataclass
from uuid import UUID

from backend.documents.service import not_found
from backend.mindmap.concepts import Concept, heading_concepts, links_of, plan_concepts
from backend.mindmap.tree import (
    MAX_NODES,
    PASSAGES_PER_NODE,
    MapNode,
    Tree,
    build_tree,
    documents_of,
    passages_of,
)
from core.store.content import documents, outline
from core.store.runs import plans
from core.store.sql.access import Connection, ProjectScope

PLANS_READ = 5  # the newest plans, whose sections become the concepts


@dataclass(frozen=True, slots=True)
class MapLink:
    source: str  # a concept
    target: str  # a node that shows its passages


@dataclass(frozen=True, slots=True)
class MindMap:
    project_id: UUID
    document_id: UUID | None
    nodes: list[MapNode]  # parents before their children; empty when nothing is indexed yet
    links: list[MapLink]
    concepts_from: str  # "plans", "headings" or "none"
    depth: int  # heading levels shown below each document
    folded: bool  # deeper headings were folded into the last level shown
    truncated: bool  # documents were left out to stay within node_cap
    node_cap: int


async def project_map(conn: Connection, scope: ProjectScope, *, project_name: str) -> MindMap:
    rows = await outline.project_sections(conn, **scope)
    root = MapNode("root", None, "project", project_name, None, [], None, None, None, [], 0)
    tree = build_tree(documents_of(rows), root=root)
    return await _with_concepts(conn, scope, tree, None)


async def document_map(conn: Connection, scope: ProjectScope, *, document_id: UUID) -> MindMap:
    rows = await outline.document_sections(conn, **scope, document_id=document_id)
    if not rows and await documents.get_document(conn, **scope, document_id=document_id) is None:
        raise not_found()
    tree = build_tree(documents_of(rows), root=None)
    return await _with_concepts(conn, scope, tree, document_id)


async def _with_concepts(
    conn: Connection, scope: ProjectScope, tree: Tree, document_id: UUID | None
) -> MindMap:
    stored = await plans.list_plans(conn, **scope, page={"limit": PLANS_READ, "offset": 0})
    concepts, origin = plan_concepts([plan.outline for plan in stored], tree.node_of_chunk), "plans"
    if not concepts:
        concepts, origin = heading_concepts(tree.branches), "headings"
    nodes, links = list(tree.nodes), []
    if concepts and nodes:
        concept_nodes = [_concept_node(f"c{index}", concept, tree) for index, concept in enumerate(concepts)]
        links = [MapLink(node.id, target) for node, concept in zip(concept_nodes, concepts, strict=True)
                 for target in links_of(concept, tree.node_of_chunk)]  # fmt: skip
        union = {chunk_id for concept in concepts for chunk_id in concept.chunk_ids}
        firsts = [node.passages[0] for node in concept_nodes][:PASSAGES_PER_NODE]
        group = MapNode(
            "concepts",
            nodes[0].id,
            "concepts",
            "Key concepts",
            None,
            [],
            None,
            None,
            None,
            firsts,
            len(union),
        )
        nodes += [group, *concept_nodes]
    return MindMap(
        project_id=scope["project_id"],
        document_id=document_id,
        nodes=nodes,
        links=links,
        concepts_from=origin if concepts and nodes else "none",
        depth=tree.depth,
        folded=tree.folded,
        truncated=tree.truncated,
        node_cap=MAX_NODES,
    )


def _concept_node(node_id: str, concept: Concept, tree: Tree) -> MapNode:
    in_documents = {tree.document_of_chunk[chunk_id] for chunk_id in concept.chunk_ids}
    return MapNode(
        id=node_id,
        parent="concepts",
        kind="concept",
        label=concept.label,
        document_id=next(iter(in_documents)) if len(in_documents) == 1 else None,
        section_path=[],
        page_start=None,
        page_end=None,
        location=None,
        passages=passages_of(concept.chunk_ids, tree.document_of_chunk),
        chunk_count=len(concept.chunk_ids),
    )

"""The map's concept nodes, and their links to the sections they are about. No model call.

Where the project has plans, their sections are the concepts: the Content Planner named each and stored
the chunks that support it (plans.outline), so a concept leads to the passages the planner grouped. A
study guide is written from a plan, but its concept names live in Markdown whose citations are footnote
numbers, not chunk ids: the plan is the traceable record of the same concepts.

Without a plan, the concepts are the terms the headings share: a content word (crudely stemmed, so
"Reference" and "References" are one term) in the headings of two or more of the map's sections.
Headings are the author's own names for what a section is about, in the material's language; a term
several headings share is what links those sections; and it is read from the same rows as the tree, each
term leading to the chunks under the headings it came from. The lexical index's statistics
(project_lexeme_stats) were the alternative: their stemmed lexemes ("borrow", "variabl") are not labels
a student can read, and a term's sections would cost a query over every chunk's tsvector."""

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.mindmap.tree import MAX_CONCEPTS, Branch
from core.text.words import STOP_WORDS, stem

MAX_LINKS = 8  # sections a concept links to (those holding most of its chunks)
_LETTERS = re.compile(r"[^\W\d_]+")  # a heading's numbering ("3.1 -") names nothing
_NUMBERED = re.compile(r"[^\W\d_]+\s+\d+")  # "Chapter 3", "Capítulo 3": a place, not a subject
FURNITURE = 3  # a whole heading met this often ("Summary", "Exercícios", "Glossário") is the book's frame


@dataclass(frozen=True, slots=True)
class Concept:
    label: str
    chunk_ids: list[int]  # all in the map, in the order of their source
    origin: str  # "plan" or "headings"


def plan_concepts(outlines: list[dict[str, Any]], shown: Mapping[int, str]) -> list[Concept]:
    """The plans' sections (newest plan first), once per title, with the chunks of theirs the map
    shows: a chunk id a reindex retired is dropped, and a section left with none is no concept."""
    concepts: list[Concept] = []
    seen: set[str] = set()
    for outline in outlines:
        for section in outline.get("sections", []):
            title = " ".join(str(section.get("title", "")).split())[:200]
            ids = [chunk_id for chunk_id in dict.fromkeys(section.get("chunk_ids", [])) if chunk_id in shown]
            if title and ids and title.casefold() not in seen:
                seen.add(title.casefold())
                concepts.append(Concept(title, ids, "plan"))
                if len(concepts) == MAX_CONCEPTS:
                    return concepts
    return concepts


@dataclass
class _Term:
    order: int
    forms: Counter[str] = field(default_factory=Counter)
    nodes: dict[str, None] = field(default_factory=dict)
    chunks: dict[int, None] = field(default_factory=dict)


def heading_concepts(branches: list[tuple[Branch, str]]) -> list[Concept]:
    """Terms in the headings of two or more shown sections, most widely shared first. A term in most
    headings (a book's own subject) links everything and so nothing: kept out above two thirds; so are
    the headings that recur whole (a chapter's "Summary" or "Exercícios"), the book's frame."""
    terms: dict[str, _Term] = {}
    headings = Counter(_heading_key(branch.label) for branch, _ in branches)
    for branch, node in branches:
        if headings[_heading_key(branch.label)] >= FURNITURE:
            continue
        words = {_key(word): word for word in _LETTERS.findall(_NUMBERED.sub(" ", branch.label))}
        for key, word in words.items():
            if len(word) < 4 or word.casefold() in STOP_WORDS:  # "Non-Owning", "How", "New": no subject
                continue
            term = terms.setdefault(key, _Term(len(terms)))
            term.forms[word] += 1
            term.nodes[node] = None
            term.chunks.update(dict.fromkeys(branch.chunk_ids()))
    sections = len({node for _, node in branches})
    widest = sections if sections < 6 else sections * 2 // 3
    shared = [term for term in terms.values() if 2 <= len(term.nodes) <= widest and term.chunks]
    shared.sort(key=lambda term: (-len(term.nodes), -len(term.chunks), term.order))
    picked: list[_Term] = []
    for term in shared:  # "Fixing" and "Program" of the same "Fixing an Unsafe Program" headings: one
        if all(term.nodes.keys() != other.nodes.keys() for other in picked):
            picked.append(term)
    return [Concept(_label(term.forms), list(term.chunks), "headings") for term in picked[:MAX_CONCEPTS]]


def _key(word: str) -> str:
    """One key for a word's forms: crudely stemmed, and a plural's "s" dropped first ("Types", "Listas")."""
    word = word.casefold()
    return stem(word[:-1] if len(word) > 3 and word.endswith("s") else word)


def _heading_key(label: str) -> str:
    return " ".join(_LETTERS.findall(label.casefold()))


def _label(forms: Counter[str]) -> str:
    word = forms.most_common(1)[0][0]
    return word[0].upper() + word[1:]


def links_of(concept: Concept, node_of_chunk: Mapping[int, str]) -> list[str]:
    """The nodes that show the concept's chunks, those with most of them first."""
    counts = Counter(node_of_chunk[chunk_id] for chunk_id in concept.chunk_ids if chunk_id in node_of_chunk)
    return [node for node, _ in counts.most_common(MAX_LINKS)]

"""What the Content Writer can write besides a study note: a study guide (key concepts, each with a
cited explanation and a check question), an FAQ, and a glossary of the material's terms.

Each kind has the model's reply shape for one section and how that reply becomes Markdown. Every
entry names the one source it comes from, as the note's points do: the application turns the number
into a citation (graph.map_citations), so every kind is cited the same way."""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agents.common.prose import shorten
from agents.writer import config
from agents.writer.state import SectionDraft, SourceNumber, sentences

Kind = Literal["note", "study_guide", "faq", "glossary"]
KINDS: tuple[Kind, ...] = ("note", "study_guide", "faq", "glossary")


def _clean(text: str, limit: int) -> str:
    """Whitespace collapsed; a reply cut by the grammar's maxLength ends cleanly."""
    text = " ".join(text.split())
    return shorten(text, limit - 1) if len(text) >= limit else text


class Concept(BaseModel):
    name: str = Field(description="the concept, a few words", json_schema_extra={"maxLength": 80})
    explanation: str = sentences("one or two sentences")
    source: SourceNumber
    check_question: str = Field(
        description="a short question testing the concept", json_schema_extra={"maxLength": 200}
    )
    check_answer: str = Field(description="its short answer", json_schema_extra={"maxLength": 200})


class GuideDraft(BaseModel):
    concepts: list[Concept] = Field(json_schema_extra={"maxItems": config.MAX_CONCEPTS})


class FaqEntry(BaseModel):
    question: str = Field(description="a question a student would ask", json_schema_extra={"maxLength": 200})
    answer: str = sentences("one or two sentences")
    source: SourceNumber


class FaqDraft(BaseModel):
    entries: list[FaqEntry] = Field(json_schema_extra={"maxItems": config.MAX_FAQ})


class Term(BaseModel):
    term: str = Field(description="a term the material uses", json_schema_extra={"maxLength": 80})
    definition: str = sentences("one sentence, as the material defines it")
    source: SourceNumber


class GlossaryDraft(BaseModel):
    terms: list[Term] = Field(json_schema_extra={"maxItems": config.MAX_TERMS})


def render_points(draft: SectionDraft) -> str:
    """One bullet per point, its source number as a citation for map_citations to resolve."""
    lines = []
    for point in draft.points[: config.MAX_POINTS]:
        text = _clean(point.text, config.POINT_CHARS)
        if text:
            lines.append(f"- {text} [{point.source}]")
    return "\n".join(lines)


def render_guide(draft: GuideDraft) -> str:
    blocks = []
    for concept in draft.concepts[: config.MAX_CONCEPTS]:
        name, text = _clean(concept.name, 80), _clean(concept.explanation, config.POINT_CHARS)
        question, answer = _clean(concept.check_question, 200), _clean(concept.check_answer, 200)
        if name and text:
            block = f"### {name}\n\n{text} [{concept.source}]"
            if question:
                block += f"\n\n*Check yourself:* {question}" + (f"\n*Answer:* {answer}" if answer else "")
            blocks.append(block)
    return "\n\n".join(blocks)


def render_faq(draft: FaqDraft) -> str:
    blocks = []
    for entry in draft.entries[: config.MAX_FAQ]:
        question, answer = _clean(entry.question, 200), _clean(entry.answer, config.POINT_CHARS)
        if question and answer:
            blocks.append(f"**{question}**\n\n{answer} [{entry.source}]")
    return "\n\n".join(blocks)


def render_glossary(draft: GlossaryDraft) -> str:
    lines = []
    for term in draft.terms[: config.MAX_TERMS]:
        name, definition = _clean(term.term, 80).strip("*"), _clean(term.definition, config.POINT_CHARS)
        if name and definition:
            lines.append(f"- **{name}**: {definition} [{term.source}]")
    return "\n".join(lines)


_TERM_LINE = re.compile(r"^- \*\*(.+?)\*\*:")


def glossary_lines(bodies: list[str]) -> list[str]:
    """The terms of every section in one alphabetical list, the first definition of a repeated term."""
    by_term: dict[str, str] = {}
    for body in bodies:
        for line in body.splitlines():
            match = _TERM_LINE.match(line)
            if match:
                by_term.setdefault(match.group(1).casefold(), line)
    return [by_term[term] for term in sorted(by_term)]


@dataclass(frozen=True)
class KindSpec:
    noun: str  # what the system prompt says is being written
    title: str  # the document's title prefix
    filename: str  # the document's file name prefix
    draft: type[BaseModel]  # the model's reply for one section
    render: Callable[[BaseModel], str]  # the reply as Markdown with [n] source numbers
    asks: str  # what the system prompt asks for
    reply: str  # the reply's JSON shape, shown to the model
    per_line_sources: bool = False  # an uncited section cites its sources on each entry (glossary)


SPECS: dict[Kind, KindSpec] = {
    "note": KindSpec(
        "study note",
        "Study note",
        "study-note",
        SectionDraft,
        render_points,  # type: ignore[arg-type]
        f"Give 3 to {config.MAX_POINTS} key points in a sensible order. Each point is one short sentence in"
        " your own words (at most 30 words, no code blocks) that states a fact from one source, with that"
        " source's number.",
        '{"points": [{"text": "...", "source": 1}]}',
    ),
    "study_guide": KindSpec(
        "study guide",
        "Study guide",
        "study-guide",
        GuideDraft,
        render_guide,  # type: ignore[arg-type]
        f"Give 1 to {config.MAX_CONCEPTS} key concepts. For each: its name, an explanation in one or two"
        " short sentences (no code blocks) that states what one source says, that source's number, and a"
        " short check question a student answers to test the concept, with its short answer.",
        '{"concepts": [{"name": "...", "explanation": "...", "source": 1, "check_question": "...",'
        ' "check_answer": "..."}]}',
    ),
    "faq": KindSpec(
        "FAQ",
        "FAQ",
        "faq",
        FaqDraft,
        render_faq,  # type: ignore[arg-type]
        f"Give 2 to {config.MAX_FAQ} questions a student would ask about this section, each with an answer"
        " of one or two short sentences (no code blocks) from one source, and that source's number.",
        '{"entries": [{"question": "...", "answer": "...", "source": 1}]}',
    ),
    "glossary": KindSpec(
        "glossary",
        "Glossary",
        "glossary",
        GlossaryDraft,
        render_glossary,  # type: ignore[arg-type]
        f"Give 2 to {config.MAX_TERMS} terms the sources use, each with a one-sentence definition as the"
        " source gives it, and that source's number.",
        '{"terms": [{"term": "...", "definition": "...", "source": 1}]}',
        per_line_sources=True,
    ),
}

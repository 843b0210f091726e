"""Content Writer graph: for each planned section, retrieve -> write -> map citations; then assemble.

The model gives entries (a note's key points, a study guide's concepts, an FAQ's questions, a
glossary's terms: agents/writer/kinds.py), each with the number of the source it was shown; the
application maps
the numbers to the chunk ids it actually retrieved, drops numbers that name no source, and builds
the references itself."""

import re
from typing import Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agents.common.citations import build_citations
from agents.common.context import AgentContext
from agents.common.plan import PlanSection
from agents.writer import config
from agents.writer.kinds import SPECS, Kind, glossary_lines
from agents.writer.prompts import section_messages
from agents.writer.state import (
    Reference,
    WriterInput,
    WriterOutput,
    WriterState,
    WrittenSection,
)
from core.llm.structured import ask_structured
from core.observability import timing
from core.retrieval import Candidate, Filters

# Code is left alone: `v[2]` in a Rust snippet is an index, not a citation.
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)
# [1], [^2], [1, 3], [Source 2]; not a Markdown link "[1](...)" nor an index "v[2]".
_CITATION = re.compile(
    r"(\s?)(?<!\w)\[\^?\s*(?:sources?\s*:?\s*)?(\d+(?:\s*[,;]\s*\^?\s*\d+)*)\s*\](?!\()", re.IGNORECASE
)
_MARKER = re.compile(r"\[\^chunk-(\d+)\]")


def map_citations(text: str, sources: list[Candidate]) -> tuple[str, list[int], list[str]]:
    """The text with valid citations as [^chunk-{id}] markers, the cited ids in order, and the labels
    that were dropped. A number n in 1..len(sources) is the n-th source; a number equal to a shown
    source's chunk id is that chunk; anything else was invented."""
    by_chunk_id = {source.chunk_id for source in sources}
    claimed: list[int] = []
    dropped: list[str] = []

    def replace(match: re.Match[str]) -> str:
        ids: list[int] = []
        for label in re.findall(r"\d+", match.group(2)):
            number = int(label)
            if 1 <= number <= len(sources):
                ids.append(sources[number - 1].chunk_id)
            elif number in by_chunk_id:
                ids.append(number)
            else:
                dropped.append(label)
        claimed.extend(ids)
        if not ids:
            return ""
        return match.group(1) + "".join(f"[^chunk-{chunk_id}]" for chunk_id in dict.fromkeys(ids))

    parts = _CODE.split(text)
    mapped = "".join(part if index % 2 else _CITATION.sub(replace, part) for index, part in enumerate(parts))
    cited, invented = build_citations(claimed, sources)
    dropped.extend(str(chunk_id) for chunk_id in invented)
    return mapped, [citation.chunk_id for citation in cited], dropped


def shared_section(section: PlanSection) -> tuple[str, ...]:
    """The longest section path shared by the plan's chunks for this section, if they share one."""
    paths = [tuple(source.section_path) for source in section.sources]
    if not paths:
        return ()
    prefix = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(prefix), len(path)) and prefix[length] == path[length]:
            length += 1
        prefix = prefix[:length]
    return prefix


def pick_sources(results: list[Candidate], planned: list[int]) -> list[Candidate]:
    """The planned chunks that retrieval found again first, then the rest in retrieval order."""
    wanted = set(planned)
    ordered = [c for c in results if c.chunk_id in wanted] + [c for c in results if c.chunk_id not in wanted]
    return ordered[: config.SOURCES_PER_SECTION]


async def write_section(state: WriterState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    index = state.get("index", 0)
    section = state["sections"][index]
    started = timing.mark()
    result = await ctx.retriever.search(
        project_id=ctx.project_id,
        user_id=ctx.user_id,
        query=f"{section.title}. {section.goal}".strip(),
        profile=config.PROFILE,
        top_k=config.TOP_K,
        filters=Filters(kind="uploaded"),  # a note is grounded in the material, never in other notes
        prefer_section=shared_section(section),
    )
    sources = pick_sources(result.results, section.chunk_ids)
    retrieval_ms = timing.elapsed_ms(started, 1)
    if not sources:
        written = WrittenSection(
            title=section.title,
            body="",
            sources=[],
            cited_chunk_ids=[],
            dropped_citations=[],
            skipped="no material was retrieved for this section",
            retrieval_ms=retrieval_ms,
        )
        return {"index": index + 1, "written": [written]}

    started = timing.mark()
    kind = cast(Kind, state.get("kind", "note"))
    spec = SPECS[kind]
    messages = section_messages(
        note_title=state["title"],
        title=section.title,
        goal=section.goal,
        sources=sources,
        language=ctx.language,
        kind=kind,
    )
    draft = await ask_structured(ctx.llm, spec.draft, messages, mode=ctx.structured_mode, usage=ctx.usage)
    generation_ms = timing.elapsed_ms(started, 1)

    body, cited, dropped = map_citations(spec.render(draft), sources)
    citations, _ = build_citations([s.chunk_id for s in sources], sources)
    uncited = bool(body) and not cited
    # The section was still written from these chunks: say so rather than cite nothing.
    markers = " ".join(f"[^chunk-{s.chunk_id}]" for s in sources)
    if spec.per_line_sources:  # a glossary's entries are sorted apart from their section: each cites
        body = "\n".join(line if "[^chunk-" in line else f"{line} {markers}" for line in body.splitlines())
    elif uncited:
        body += f"\n\n*Sources:* {markers}"
    written = WrittenSection(
        title=section.title,
        body=body,
        sources=citations,
        cited_chunk_ids=cited,
        dropped_citations=dropped,
        uncited=uncited,
        skipped=None if body else "the model wrote nothing for this section",
        retrieval_ms=retrieval_ms,
        generation_ms=generation_ms,
    )
    ctx.timings_ms[f"section_{index + 1}"] = retrieval_ms + generation_ms
    return {"index": index + 1, "written": [written]}


def next_step(state: WriterState) -> Literal["write_section", "assemble"]:
    return "write_section" if state.get("index", 0) < len(state["sections"]) else "assemble"


def _pages(reference: Reference) -> str:
    if reference.page_start is None:
        return ""
    one, many = ("slide", "slides") if reference.location == "slide" else ("p.", "pp.")
    if reference.page_end in (None, reference.page_start):
        return f", {one} {reference.page_start}"
    return f", {many} {reference.page_start}–{reference.page_end}"


async def assemble(state: WriterState, runtime: Runtime[AgentContext]) -> dict:
    """Numbers the citations in order of first use across the note and lists them at the end."""
    by_id = {citation.chunk_id: citation for w in state.get("written", []) for citation in w.sources}
    numbers: dict[int, int] = {}

    def number(match: re.Match[str]) -> str:
        chunk_id = int(match.group(1))
        return f"[^{numbers.setdefault(chunk_id, len(numbers) + 1)}]"

    lines = [f"# {state['title']}", ""]
    done = [written for written in state.get("written", []) if not written.skipped]
    if state.get("kind") == "glossary":  # one alphabetical list of the sections' terms
        terms = glossary_lines([written.body for written in done])
        if terms:
            lines += [_MARKER.sub(number, "\n".join(terms)), ""]
    else:
        for written in done:
            lines += [f"## {written.title}", "", _MARKER.sub(number, written.body), ""]
    planned = {section.title for section in state["sections"]}
    uncovered = [(gap.title, gap.reason) for gap in state["gaps"] if gap.title not in planned]
    uncovered += [(w.title, w.skipped) for w in state.get("written", []) if w.skipped]
    if uncovered:
        lines += ["## Not covered by the material", ""]
        lines += [f"- {title}: {reason}" for title, reason in uncovered] + [""]
    references = [
        Reference(number=n, **by_id[chunk_id].model_dump(exclude={"excerpt"}))
        for chunk_id, n in numbers.items()
    ]
    if references:
        lines += ["## References", ""]
        for reference in references:
            where = " › ".join(reference.section_path) or "whole document"
            lines.append(f"[^{reference.number}]: {reference.document_title}, {where}{_pages(reference)}")
        lines.append("")
    return {"markdown": "\n".join(lines).rstrip() + "\n", "references": references}


builder = StateGraph(
    WriterState, context_schema=AgentContext, input_schema=WriterInput, output_schema=WriterOutput
)
builder.add_node("write_section", write_section)
builder.add_node("assemble", assemble)
builder.add_conditional_edges(START, next_step)
builder.add_conditional_edges("write_section", next_step)
builder.add_edge("assemble", END)
graph = builder.compile()
graph.name = "content_writer"

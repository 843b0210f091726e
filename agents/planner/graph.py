"""Content Planner graph: retrieve broadly -> one structured outline call -> the application checks it.

The model only groups numbered excerpts into sections. Which chunks really support a section, how
well the material covers it, and where the gaps are is computed by the application from the
retrieval itself, so no number in a plan comes from the model's say-so."""

from statistics import fmean
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agents.common.citations import ref_fields
from agents.common.context import AgentContext
from agents.common.plan import PlanGap, PlanSection, SourceRef
from agents.planner import config
from agents.planner.prompts import outline_messages
from agents.planner.state import DraftOutline, DraftSection, PlannerInput, PlannerOutput, PlannerState
from core.llm.structured import ask_structured
from core.observability import timing
from core.retrieval import Candidate, Filters, RetrievalResult


def _relevance(result: RetrievalResult) -> dict[int, float]:
    """Each result's rerank score min-max scaled over every candidate the reranker scored (up to 100).

    Scales differ by reranker (blend 0..1, RRF ~0.03, cross-encoder logits), so the figure is
    relative to the project's candidate pool for this query: 1 is the best match in the pool, 0 the
    weakest candidate. It says how well a chunk matches compared with the rest of the material."""
    pool = result.reranked or result.results
    scores = [c.rerank_score or 0.0 for c in pool]
    low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
    spread = high - low
    return {
        c.chunk_id: 1.0 if spread < 1e-12 else round(((c.rerank_score or 0.0) - low) / spread, 4)
        for c in result.results
    }


def planner_input(topic: str | None, headings: list[str], max_sections: int) -> PlannerInput:
    """A topic is searched as given; without one, the project's titles and headings make a broad query."""
    if topic:
        return {"topic": topic, "query": topic, "max_sections": max_sections}
    query = ""
    for heading in headings:
        if len(query) + len(heading) + 2 > config.BROAD_QUERY_CHARS:
            break
        query = f"{query}; {heading}" if query else heading
    return {"topic": None, "query": query or "main topics", "max_sections": max_sections}


def coverage(support: int, relevance: float) -> float:
    """Enough chunks (FULL_SUPPORT or more) that match well -> 1; none -> 0."""
    return round(min(1.0, support / config.FULL_SUPPORT) * relevance, 3)


def _clean(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat[:limit].rstrip()


def _source(candidate: Candidate, relevance: float) -> SourceRef:
    return SourceRef(**ref_fields(candidate), relevance=relevance)


def group_by_section(retrieved: list[Candidate]) -> list[list[Candidate]]:
    """The retrieved chunks as topics: one per (document, section path), in reading order, a long
    section cut into runs of GROUP_CHUNKS. The model groups a handful of topics far more reliably
    than eighteen loose excerpts, and the prompt gets shorter."""
    first_seen: dict[str, int] = {}
    groups: dict[tuple[str, tuple[str, ...]], list[Candidate]] = {}
    for rank, candidate in enumerate(retrieved):
        document = str(candidate.row.get("document_id", ""))
        first_seen.setdefault(document, rank)
        groups.setdefault((document, tuple(candidate.row.get("section_path", ()))), []).append(candidate)
    topics: list[list[Candidate]] = []
    for _, members in sorted(
        groups.items(), key=lambda item: (first_seen[item[0][0]], min(_ordinal(c) for c in item[1]))
    ):
        members = sorted(members, key=_ordinal)
        topics += [members[i : i + config.GROUP_CHUNKS] for i in range(0, len(members), config.GROUP_CHUNKS)]
    return topics


def _ordinal(candidate: Candidate) -> int:
    return int(candidate.row.get("ordinal") or 0)


def assess_outline(
    draft: list[DraftSection],
    topics: list[list[Candidate]],
    relevance: dict[int, float],
    max_sections: int,
) -> tuple[list[PlanSection], list[PlanGap], list[int], list[int]]:
    """Sections with real supporting chunks and their coverage; gaps; unassigned chunk ids; the
    topic numbers the model invented."""
    sections: list[PlanSection] = []
    gaps: list[PlanGap] = []
    invented: list[int] = []
    used: set[int] = set()
    for proposed in draft[:max_sections]:
        title, goal = _clean(proposed.title, config.TITLE_CHARS), _clean(proposed.goal, config.GOAL_CHARS)
        if not title:
            continue
        chosen: dict[int, Candidate] = {}
        for number in proposed.sources:
            if not 1 <= number <= len(topics):
                invented.append(number)
                continue
            for candidate in topics[number - 1]:
                chosen.setdefault(candidate.chunk_id, candidate)
        # The best-matching chunks when the topics hold more than a section needs.
        best = sorted(chosen.values(), key=lambda c: -relevance.get(c.chunk_id, 0.0))
        supporting = best[: config.MAX_CHUNKS_PER_SECTION]
        if not supporting:
            gaps.append(PlanGap(title=title, goal=goal, reason="no retrieved chunk supports this section"))
            continue
        used.update(c.chunk_id for c in supporting)
        mean = round(fmean(relevance.get(c.chunk_id, 0.0) for c in supporting), 3)
        section = PlanSection(
            title=title,
            goal=goal,
            chunk_ids=[c.chunk_id for c in supporting],
            sources=[_source(c, relevance.get(c.chunk_id, 0.0)) for c in supporting],
            support=len(supporting),
            relevance=mean,
            coverage=coverage(len(supporting), mean),
        )
        sections.append(section)
        if section.coverage < config.GAP_BELOW:
            gaps.append(
                PlanGap(
                    title=title,
                    goal=goal,
                    reason=f"thin material: {section.support} chunk(s), mean relevance {mean:.2f}",
                    coverage=section.coverage,
                )
            )
    retrieved = [c for topic in topics for c in topic]
    unassigned = [c.chunk_id for c in retrieved if c.chunk_id not in used]
    return sections, gaps, unassigned, invented


async def retrieve(state: PlannerState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    started = timing.mark()
    result = await ctx.retriever.search(
        project_id=ctx.project_id,
        user_id=ctx.user_id,
        query=state["query"],
        profile=config.PROFILE,
        top_k=config.TOP_K,
        filters=Filters(kind="uploaded"),  # a plan is built on the material, never on earlier notes
    )
    ctx.timings_ms["retrieve"] = timing.elapsed_ms(started, 1)
    return {
        "retrieved": result.results,
        "topics": group_by_section(result.results),
        "relevance": _relevance(result),
    }


def after_retrieve(state: PlannerState) -> Literal["outline", "nothing_found"]:
    return "outline" if state["retrieved"] else "nothing_found"


async def outline(state: PlannerState, runtime: Runtime[AgentContext]) -> dict:
    ctx = runtime.context
    started = timing.mark()
    messages = outline_messages(
        topic=state["topic"],
        topics=state["topics"],
        max_sections=state["max_sections"],
        language=ctx.language,
    )
    reply = await ask_structured(ctx.llm, DraftOutline, messages, mode=ctx.structured_mode, usage=ctx.usage)
    ctx.timings_ms["outline"] = timing.elapsed_ms(started, 1)
    return {"draft": reply.sections}


async def assess(state: PlannerState, runtime: Runtime[AgentContext]) -> dict:
    sections, gaps, unassigned, invented = assess_outline(
        state["draft"], state["topics"], state["relevance"], state["max_sections"]
    )
    return {"sections": sections, "gaps": gaps, "unassigned_chunk_ids": unassigned, "invented": invented}


async def nothing_found(state: PlannerState, runtime: Runtime[AgentContext]) -> dict:
    title = state["topic"] or "this project"
    gap = PlanGap(title=title, reason="the project has no indexed material on this")
    return {"sections": [], "gaps": [gap], "unassigned_chunk_ids": [], "invented": []}


builder = StateGraph(
    PlannerState, context_schema=AgentContext, input_schema=PlannerInput, output_schema=PlannerOutput
)
builder.add_node("retrieve", retrieve)
builder.add_node("outline", outline)
builder.add_node("assess", assess)
builder.add_node("nothing_found", nothing_found)
builder.add_edge(START, "retrieve")
builder.add_conditional_edges("retrieve", after_retrieve)
builder.add_edge("outline", "assess")
builder.add_edge("assess", END)
builder.add_edge("nothing_found", END)
graph = builder.compile()
graph.name = "content_planner"

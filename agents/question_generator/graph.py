"""Question Generator graph: pick source chunks, then one model call per question, each reply checked
by the application (sources, fields, distractors, support, near-duplicates) before it is stored.

select_sources ─(none)→ END
      │
  generate ⇄ check ─(enough, or out of calls/sources)→ save → END
"""

import asyncio
from dataclasses import asdict
from typing import Any, Literal

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agents.common.context import AgentContext
from agents.question_generator.checks import answer_support, cosine, fold, refers_to_source, unit_interval
from agents.question_generator.config import GeneratorConfig
from agents.question_generator.prompts import SCHEMAS, generation_messages
from agents.question_generator.state import (
    QUESTION_TYPES,
    InputState,
    OutputState,
    Pending,
    QuestionType,
    Rejection,
    RejectReason,
    State,
)
from core.llm.structured import StructuredOutputError, ask_structured
from core.observability import timing
from core.retrieval import Candidate, Filters
from core.store.study import questions
from core.store.study.questions import NewQuestion, Question


def _user(ctx: AgentContext) -> Any:
    if ctx.user_id is None:
        raise ValueError(
            "the question generator stores questions for a user: AgentContext.user_id is required"
        )
    return ctx.user_id


def group_sources(candidates: list[Candidate], config: GeneratorConfig) -> list[list[Candidate]]:
    """One group per model call: a chunk, joined by an adjacent chunk of its document when both fit."""
    groups: list[list[Candidate]] = []
    taken: set[int] = set()
    for candidate in candidates:
        if candidate.chunk_id in taken:
            continue
        group, size = [candidate], len(candidate.text)
        taken.add(candidate.chunk_id)
        for other in candidates:
            if len(group) >= config.chunks_per_question:
                break
            if (
                other.chunk_id not in taken
                and other.row["document_id"] == candidate.row["document_id"]
                and abs(other.row["ordinal"] - candidate.row["ordinal"]) == 1
                and size + len(other.text) <= config.source_chars
            ):
                group.append(other)
                taken.add(other.chunk_id)
                size += len(other.text)
        groups.append(sorted(group, key=lambda c: c.row["ordinal"]))
    return groups


async def select_sources(state: State, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    ctx, config = runtime.context, state.config
    started = timing.mark()
    if state.document_id is not None or state.section:
        result = await ctx.retriever.search(
            project_id=ctx.project_id,
            user_id=_user(ctx),
            query=state.topic or config.default_topic,
            profile="generator",
            top_k=config.source_top_k,
            filters=Filters(
                document_ids=(state.document_id,) if state.document_id else (), section=state.section
            ),
        )
        candidates = [c for c in result.results if len(c.text) >= config.min_source_chars] or result.results
        async with ctx.retriever.pool.connection() as conn:
            used = await questions.used_source_chunk_ids(
                conn,
                project_id=ctx.project_id,
                user_id=_user(ctx),
                chunk_ids=[c.chunk_id for c in candidates],
            )
        candidates.sort(key=lambda c: c.chunk_id in used)  # stable: retrieval order within each half
    else:
        async with ctx.retriever.pool.connection() as conn:
            chunks = await questions.sample_source_chunks(
                conn,
                project_id=ctx.project_id,
                user_id=_user(ctx),
                limit=config.source_top_k,
                min_chars=config.min_source_chars,
            )
        candidates = [Candidate(chunk_id=chunk.id, row=asdict(chunk)) for chunk in chunks]
    ctx.timings_ms["sources"] = timing.elapsed_ms(started)
    groups = group_sources(candidates, config)
    if not groups:
        return {"groups": [], "reason": "no_sources", "saved": [], "rejected": []}
    return {"groups": groups}


def _next_type(state: State) -> QuestionType:
    types = state.types or QUESTION_TYPES
    return types[len(state.accepted) % len(types)]  # a discarded question's type is tried again


async def generate(state: State, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    ctx = runtime.context
    question_type = _next_type(state)
    sources = state.groups[state.calls]
    messages = generation_messages(
        question_type, sources, language=ctx.language, source_chars=state.config.source_chars
    )
    started = timing.mark()
    try:
        reply = await ask_structured(
            ctx.llm, SCHEMAS[question_type], messages, mode=ctx.structured_mode, usage=ctx.usage
        )
        pending = Pending(type=question_type, sources=sources, reply=reply.model_dump())
    except StructuredOutputError as error:
        pending = Pending(type=question_type, sources=sources, reply=None, error=str(error)[:300])
    ctx.timings_ms["generate"] = ctx.timings_ms.get("generate", 0.0) + timing.elapsed_ms(started)
    return {"pending": pending, "calls": state.calls + 1}


def _rejected(
    state: State, pending: Pending, reason: RejectReason, detail: str, **extra: Any
) -> dict[str, Any]:
    question = pending.reply.get("question") if pending.reply else None
    rejection = Rejection(reason=reason, detail=detail, type=pending.type, question=question, **extra)  # type: ignore[arg-type]
    return {"pending": None, "rejected": [*state.rejected, rejection]}


async def check(state: State, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    ctx, config, pending = runtime.context, state.config, state.pending
    assert pending is not None
    if pending.reply is None:
        return _rejected(state, pending, "invalid_output", pending.error)
    reply = pending.reply
    text, answer = str(reply["question"]).strip(), str(reply["answer"]).strip()
    explanation = str(reply["explanation"]).strip()
    if not (text and answer and explanation):
        return _rejected(state, pending, "empty_field", "question, answer and explanation must not be empty")
    if pending.type == "flashcard" and fold(answer) == fold(text):
        return _rejected(state, pending, "bad_flashcard", "the back repeats the front")
    distractors: list[str] = []
    if pending.type == "multiple_choice":
        distractors = [str(d).strip() for d in reply["distractors"]]  # type: ignore[attr-defined]
        folded = {fold(d) for d in distractors}
        if len(distractors) != 3 or "" in folded or len(folded) != 3 or fold(answer) in folded:
            return _rejected(
                state, pending, "bad_distractors", "needs 3 distinct distractors unlike the answer"
            )
    by_id = {c.chunk_id: c for c in pending.sources}
    claimed = [int(i) for i in reply["sources"]]  # type: ignore[attr-defined]
    used = [by_id[i] for i in dict.fromkeys(claimed) if i in by_id]
    if not used:
        return _rejected(state, pending, "no_valid_source", f"claimed {claimed}, given {list(by_id)}")

    support = answer_support(answer, " ".join(f"{c.context_header} {c.text}" for c in used))
    model_confidence = unit_interval(float(reply["confidence"]))  # type: ignore[arg-type]
    confidence = config.model_weight * model_confidence + (1 - config.model_weight) * support
    started = timing.mark()
    embedding = np.asarray(await asyncio.to_thread(ctx.retriever.embeddings.embed_query, text), np.float32)
    ctx.timings_ms["embed"] = ctx.timings_ms.get("embed", 0.0) + timing.elapsed_ms(started)
    for earlier in state.accepted:
        similarity = cosine(earlier.embedding, embedding)
        if similarity >= ctx.thresholds.duplicate_similarity:
            return _rejected(state, pending, "duplicate", earlier.question, similarity=similarity)
    async with ctx.retriever.pool.connection() as conn:
        nearest = await questions.nearest_question(
            conn, project_id=ctx.project_id, user_id=_user(ctx), embedding=embedding
        )
    if nearest is not None and nearest.similarity >= ctx.thresholds.duplicate_similarity:
        return _rejected(
            state,
            pending,
            "duplicate",
            nearest.question,
            duplicate_of=nearest.id,
            similarity=float(nearest.similarity),
        )
    draft = NewQuestion(
        document_id=used[0].row["document_id"],
        section_path=list(used[0].row["section_path"]),
        type=pending.type,
        question=text,
        answer=answer,
        distractors=distractors,
        explanation=explanation,
        difficulty=str(reply["difficulty"]),
        confidence=round(confidence, 4),
        model_confidence=model_confidence,
        support=round(support, 4),
        status="active"
        if confidence >= config.confidence_threshold and not refers_to_source(text)
        else "review",
        source_chunk_ids=[c.chunk_id for c in used],
        embedding=embedding,
    )
    return {"pending": None, "accepted": [*state.accepted, draft]}


async def save(state: State, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    ctx = runtime.context
    saved: list[Question] = []
    rejected = list(state.rejected)
    started = timing.mark()
    async with ctx.retriever.pool.connection() as conn:
        for draft in state.accepted:
            row = await questions.insert_question(
                conn,
                project_id=ctx.project_id,
                user_id=_user(ctx),
                question=draft,
                duplicate_similarity=ctx.thresholds.duplicate_similarity,
            )
            if row is None:  # another run stored a near-duplicate meanwhile
                rejected.append(Rejection("duplicate", "stored concurrently", draft.type, draft.question))  # type: ignore[arg-type]
            else:
                saved.append(row)
    ctx.timings_ms["save"] = timing.elapsed_ms(started)
    return {"saved": saved, "rejected": rejected, "reason": None}


def after_sources(state: State) -> Literal["generate", "__end__"]:
    return END if state.reason == "no_sources" else "generate"


def after_check(state: State) -> Literal["generate", "save"]:
    wanted = min(state.n, state.config.max_questions)
    budget = min(len(state.groups), wanted + state.config.extra_calls)
    return "generate" if len(state.accepted) < wanted and state.calls < budget else "save"


builder = StateGraph(State, input_schema=InputState, output_schema=OutputState, context_schema=AgentContext)
builder.add_node(select_sources)
builder.add_node(generate)
builder.add_node(check)
builder.add_node(save)
builder.add_edge(START, "select_sources")
builder.add_conditional_edges("select_sources", after_sources)
builder.add_edge("generate", "check")
builder.add_conditional_edges("check", after_check)
builder.add_edge("save", END)
graph = builder.compile(name="question_generator")

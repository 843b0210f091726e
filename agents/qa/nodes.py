"""The RAG QA graph's nodes, each a module-level function a test can import and call alone with a
state and a runtime whose `context` is an AgentContext (`qa` is the graph's QAConfig)."""

import re
from typing import Any, Literal
from uuid import UUID

from langgraph.runtime import Runtime
from pydantic import ValidationError

from agents.common.capped import capped
from agents.common.citations import build_citations
from agents.common.context import AgentContext
from agents.common.injection import quotes_instructions
from agents.common.language import question_language
from agents.qa import prompts
from agents.qa.confidence import with_confidence
from agents.qa.config import DEFAULT_CONFIG, QAConfig
from agents.qa.evidence import passages
from agents.qa.gate import judge
from agents.qa.kept import keep_reply, kept_reply, mark_kept
from agents.qa.options import parse_choice, question_stem
from agents.qa.planning import exact_terms, named_document, needs_model_plan
from agents.qa.shown import shown_first
from agents.qa.signals import field_logprobs
from agents.qa.state import ModelAnswer, QAState, QueryPlan, ThreadPlan
from agents.qa.stream_json import JsonStream, bool_field, int_list_field, streams_content, string_field
from agents.qa.support import answer_support
from agents.qa.threads import standalone_question
from core.llm.reply_cache import CachedReply
from core.llm.structured import StructuredOutputError, ask_structured, model_name
from core.observability import timing
from core.retrieval import Filters
from core.text.words import content_words


def _offers_readings(clarification: str, question: str) -> bool:
    """A 1.5B model flags plain questions as ambiguous and asks back "Which one was meant?": only a
    question back that names alternatives ("Do you mean X or Y?") stops the graph, and not when the
    user's own words already name one of them ("and what about mutable ones?" -> "Do you mean mutable
    references or immutable ones?"): a word of one reading only, said as is."""
    text = f" {clarification.strip().lower()} "
    if len(text) < 15 or not any(word in text for word in (" or ", " ou ")):
        return False
    readings = [set(content_words(part)) for part in re.split(r"\s(?:or|ou)\s", text)]
    said = set(content_words(question))
    for index, reading in enumerate(readings):
        others = set().union(*(r for i, r in enumerate(readings) if i != index))
        if (reading - others) & said:
            return False
    return True


async def plan(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    """No model call unless a follow-up leans on the thread (agents/qa/planning.py says why)."""
    ctx = runtime.context
    mark = timing.mark()
    question = state["question"].strip()
    language = question_language(question, ctx.language)
    history = state.get("history", [])[-2 * qa.history_turns :]
    failed = None
    if needs_model_plan(question, history):
        await ctx.wait_for_model(runtime.stream_writer)
        messages = prompts.planner_messages(question, history, qa.history_chars)
        try:
            planned: QueryPlan = await ask_structured(
                capped(ctx.llm, qa.planner_max_tokens), ThreadPlan, messages,
                mode=ctx.structured_mode, usage=ctx.usage,
            )  # fmt: skip
        except StructuredOutputError as error:  # planning only refines: the question as asked
            planned, failed = QueryPlan(question=question), str(error)[:300]
    else:
        planned = QueryPlan(question=question)
    planned.question, rewritten = standalone_question(question, planned.question.strip() or question, history)
    planned.terms = exact_terms(question)
    ctx.timings_ms["planning"] = timing.elapsed_ms(mark, 1)
    update: dict[str, Any] = {
        "plan": planned.model_dump()
        | {"rewritten": rewritten, "model": needs_model_plan(question, history)}
        | ({"error": failed} if failed else {}),
        "language": language,
        "document_filter": named_document(question, state.get("documents", [])),
    }
    # A question that lists its options is a choice, never an ambiguity.
    readings = _offers_readings(planned.clarification, question)
    if planned.ambiguous and readings and parse_choice(question) is None:
        update |= {"clarification": planned.clarification.strip()}
    return update


def after_plan(state: QAState) -> Literal["clarify", "retrieve"]:
    return "clarify" if state.get("clarification") else "retrieve"


async def clarify(state: QAState) -> dict[str, Any]:
    return {
        "answer": state["clarification"],
        "has_answer": False,
        "citations": [],
        "outcome": "clarification",
    }


async def retrieve(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    ctx = runtime.context
    mark = timing.mark()
    planned = state["plan"]
    extra = [t for t in planned.get("terms", []) if t.lower() not in planned["question"].lower()]
    query = " ".join([search_text(planned["question"]), *extra])
    document = state.get("document_filter")
    filters = Filters(document_ids=(UUID(document),)) if document else Filters()
    kwargs = {"project_id": ctx.project_id, "query": query, "profile": qa.profile}
    result = await ctx.retriever.search(**kwargs, filters=filters, user_id=ctx.user_id)
    if document and not result.results:  # the named document holds nothing close: search all
        result = await ctx.retriever.search(**kwargs, user_id=ctx.user_id)
        document = None
    ctx.timings_ms["retrieval"] = timing.elapsed_ms(mark, 1)
    return {"retrieved": result.results, "document_filter": document}


def search_text(question: str) -> str:
    """What retrieval embeds and matches: a question with options loses the instruction after them
    ("Which option is correct? Give its letter..."), whose words are in every quiz, not the material."""
    choice = parse_choice(question)
    return question if choice is None else "\n".join([choice.stem, *choice.options])


async def gate(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    question = state["plan"]["question"]
    choice = parse_choice(question) is not None
    decision = judge(
        question_stem(question), state["retrieved"], qa, runtime.context.thresholds, choice=choice
    )
    update: dict[str, Any] = {"gate": decision.as_dict()}
    if not decision.passed:
        update |= not_found(state, "not_found")
    elif state.get("stream"):  # the book's own words, before the run waits for the model
        chunks = shown_first(state["retrieved"][: qa.answer_chunks], question, qa.evidence_passages)
        runtime.stream_writer(
            {"evidence": [p.model_dump() for p in passages(chunks, question_stem(question))]}
        )
    return update


def after_gate(state: QAState) -> Literal["answer", "answer_stream", "choose", "__end__"]:
    if not state["gate"]["passed"]:
        return "__end__"
    if parse_choice(state["plan"]["question"]) is not None:
        return "choose"
    return "answer_stream" if state.get("stream") else "answer"


async def answer(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    ctx = runtime.context
    chunks, messages = answer_prompt(state, qa)
    key, kept = await kept_reply(ctx, qa, messages, stream=False)
    mark = timing.mark()
    reply = _kept_answer(kept)
    if reply is not None:
        mark_kept(ctx)
    else:
        await ctx.wait_for_model(runtime.stream_writer)
        mark = timing.mark()
        reply = await ask_structured(
            capped(ctx.llm, qa.answer_max_tokens),
            ModelAnswer,
            messages,
            mode=ctx.structured_mode,
            usage=ctx.usage,
        )
        await keep_reply(ctx, key, CachedReply(raw=reply.model_dump_json(), logprobs={}))
    ctx.timings_ms["generation"] = timing.elapsed_ms(mark, 1)
    text, claimed = reply.answer.strip(), reply.used_chunk_ids
    update = finish(state, chunks, text, reply.has_answer, claimed, prompt=messages, qa=qa)
    return await with_confidence(ctx, state, update, chunks, messages, reply.model_dump_json(), {})


async def answer_stream(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    """The same JSON answer as `answer`, the text of its `answer` field passed to the stream writer as
    it is decoded; nothing is shown when the model starts with has_answer false."""
    ctx, write = runtime.context, runtime.stream_writer
    if not streams_content(ctx.structured_mode):  # function calling: the answer comes in one piece
        update = await answer(state, runtime, qa=qa)
        write({"token": update["answer"]})
        return update
    chunks, messages = answer_prompt(state, qa)
    # With the tokens' log-probabilities: how sure the model was of its words is a confidence signal.
    key, kept = await kept_reply(ctx, qa, messages, stream=True)
    if kept is None:
        await ctx.wait_for_model(write)
    mark = timing.mark()
    shown = _Shown(write, ctx.timings_ms, mark)
    message = None
    if kept is not None:  # the same prompt answered before: its reply, without a turn at the model
        raw = kept.raw
        mark_kept(ctx)
        shown.offer(raw)
    else:
        llm = capped(ctx.llm, qa.answer_max_tokens).bind(logprobs=True)
        stream = JsonStream(llm, ModelAnswer, messages, ctx.structured_mode)
        async for partial in stream:
            shown.offer(partial)
        raw, message = stream.raw, stream.message
        if message is not None:
            ctx.usage.add(model_name(ctx.llm), message)
    ctx.timings_ms["generation"] = timing.elapsed_ms(mark, 1)
    sent = shown.sent
    try:
        reply = ModelAnswer.model_validate_json(raw)
        found, text, claimed = reply.has_answer, reply.answer.strip(), reply.used_chunk_ids
    except ValidationError:  # cut off or malformed: what was shown stands, with the ids it gave
        reply = None
        found, text, claimed = bool(sent.strip()), sent.strip(), int_list_field(raw, "used_chunk_ids")
    logprobs = kept.logprobs if kept is not None else field_logprobs(message, raw, "answer")
    if kept is None and reply is not None:  # only a whole reply is kept
        await keep_reply(ctx, key, CachedReply(raw=raw, logprobs=logprobs))
    update = finish(state, chunks, text, found, claimed, prompt=messages, qa=qa)
    if not update["has_answer"]:
        if sent:  # shown, then withheld: the client drops what it was shown
            write({"reset": True})
        write({"token": update["answer"]})
        return update
    return await with_confidence(ctx, state, update, chunks, messages, raw, logprobs, write=write)


def _kept_answer(kept: CachedReply | None) -> ModelAnswer | None:
    """The kept reply as the answer it was, or None (none kept, or kept by a version whose reply no longer
    reads as this one's: the model answers)."""
    if kept is None:
        return None
    try:
        return ModelAnswer.model_validate_json(kept.raw)
    except ValidationError:
        return None


class _Shown:
    """The answer's text passed to the stream writer as the reply grows (a kept reply: at once); nothing
    while the reply says has_answer false, nor once it repeats its instructions."""

    def __init__(self, write: Any, timings_ms: dict[str, float], mark: float) -> None:
        self.write, self.timings_ms, self.mark, self.sent = write, timings_ms, mark, ""

    def offer(self, raw: str) -> None:
        if bool_field(raw, "has_answer") is False:
            return
        text = string_field(raw, "answer") or ""
        if len(text) <= len(self.sent) or leaks_instructions(text):
            return  # nothing new, or it is repeating its instructions: nothing more of it is shown
        if not self.sent:
            self.timings_ms["first_token"] = timing.elapsed_ms(self.mark, 1)
        self.write({"token": text[len(self.sent) :]})
        self.sent = text


def answer_prompt(state: QAState, qa: QAConfig) -> tuple[list[Any], list[Any]]:
    """The answer model reads the user's own words unless a thread made a rewrite necessary: a
    rewrite of a standalone question can only lose detail (code, options)."""
    chunks = state["retrieved"][: qa.answer_chunks]
    question = state["plan"]["question"] if state.get("history") else state["question"]
    return chunks, prompts.answer_messages(question, chunks, state["language"], qa)


def not_found(state: QAState, outcome: Literal["not_found", "declined", "unsupported"]) -> dict[str, Any]:
    return {
        "answer": prompts.NOT_FOUND.get(state["language"], prompts.NOT_FOUND["en"]),
        "has_answer": False,
        "citations": [],
        "outcome": outcome,
    }


def finish(
    state: QAState,
    chunks: list[Any],
    text: str,
    has_answer: bool,
    claimed: list[int],
    *,
    prompt: list[Any] | None = None,
    qa: QAConfig = DEFAULT_CONFIG,
) -> dict[str, Any]:
    """The reply from the model's answer; with the `prompt` it was given, an answer whose words the
    excerpts do not hold is withheld (agents/qa/support.py)."""
    shown = {"selected_ids": [c.chunk_id for c in chunks], "claimed_ids": claimed}
    # Only ids of the chunks shown become citations: a passage that says "cite chunk 999999" gets nowhere.
    citations, invented = build_citations(claimed, chunks)
    if not has_answer or not text or leaks_instructions(text):
        return shown | {"invented_ids": invented} | not_found(state, "declined")
    if not citations:  # an answer resting on no excerpt it was shown is the model's own knowledge
        return shown | {"invented_ids": invented} | not_found(state, "unsupported")
    support = None
    if prompt is not None:
        support = answer_support(text, state["question"], str(prompt[-1].content), min_words=qa.support_words)
        shown |= {"support": support}
    if support is not None and support < qa.support_min:  # so is one that uses words they do not hold
        return shown | {"invented_ids": invented, "withheld": text} | not_found(state, "unsupported")
    return shown | {
        "answer": text,
        "has_answer": True,
        "citations": citations,
        "invented_ids": invented,
        "outcome": "answered",
    }


def leaks_instructions(text: str) -> bool:
    """An answer that repeats the model's own instructions (a passage asked it to reveal them) is withheld."""
    return any(quotes_instructions(text, system) for system in prompts.SYSTEM_PROMPTS)

"""The RAG QA graph: plan the query (or ask back), retrieve, gate on relevance, answer with
citations the application builds from the chunks it actually showed the model.

    START -> plan -> (clarify -> END) | retrieve -> gate -> (END | answer | answer_stream) -> END
"""

import time
from typing import Any, Literal
from uuid import UUID

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import ValidationError

from agents.common.citations import build_citations
from agents.common.context import AgentContext
from agents.common.injection import quotes_instructions
from agents.common.language import question_language
from agents.qa import prompts
from agents.qa.config import DEFAULT_CONFIG, QAConfig
from agents.qa.gate import judge
from agents.qa.options import question_stem
from agents.qa.state import DocumentRef, ModelAnswer, QAInput, QAOutput, QAState, QueryPlan, ThreadPlan
from agents.qa.stream_json import JsonStream, bool_field, int_list_field, streams_content, string_field
from agents.qa.threads import standalone_question
from core.retrieval import Filters
from core.structured import StructuredOutputError, ask_structured, model_name


def _elapsed_ms(mark: float) -> float:
    return round((time.perf_counter() - mark) * 1000, 1)


def _capped(llm: BaseChatModel, max_tokens: int) -> BaseChatModel:
    """A copy with a lower output cap where the model has one (bind() would not survive
    with_structured_output in function-calling mode)."""
    if "max_tokens" in type(llm).model_fields:
        return llm.model_copy(update={"max_tokens": max_tokens})
    return llm


def resolve_document(hint: str, question: str, documents: list[DocumentRef]) -> str | None:
    """The id of the one document whose title or filename the hint names AND the user's own
    question contains: a model's guess never narrows the search by itself."""
    hint, asked = hint.strip().lower(), question.lower()
    if len(hint) < 3:
        return None
    matches = []
    for doc in documents:
        names = {doc["title"].lower(), doc["filename"].lower(), doc["filename"].rsplit(".", 1)[0].lower()}
        if any(hint in name or name in hint for name in names if len(name) >= 3) and any(
            name in asked for name in names if len(name) >= 3
        ):
            matches.append(doc["id"])
    return matches[0] if len(matches) == 1 else None


def _offers_readings(clarification: str) -> bool:
    """A 1.5B model flags plain questions as ambiguous and asks back "Which one was meant?": only a
    question back that names alternatives ("Do you mean X or Y?") stops the graph."""
    text = f" {clarification.strip().lower()} "
    return len(text) >= 15 and any(word in text for word in (" or ", " ou "))


def make_nodes(config: QAConfig) -> dict[str, Any]:
    async def plan(state: QAState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        ctx = runtime.context
        mark = time.perf_counter()
        question = state["question"].strip()
        language = question_language(question, ctx.language)
        history = state.get("history", [])[-2 * config.history_turns :]
        messages = prompts.planner_messages(question, history, config.history_chars)
        try:
            planned = await ask_structured(
                _capped(ctx.llm, config.planner_max_tokens),
                ThreadPlan if history else QueryPlan,
                messages,
                mode=ctx.structured_mode,
                usage=ctx.usage,
            )
            failed = None
        except StructuredOutputError as error:  # planning only refines: fall back to the question as asked
            planned, failed = QueryPlan(question=question), str(error)[:300]
        # Empty means "stands alone as asked"; the planner never shortens a question the user wrote.
        planned.question, rewritten = standalone_question(
            question, planned.question.strip() or question, history
        )
        planned.terms = [t.strip()[:60] for t in planned.terms if t.strip()][:5]
        ctx.timings_ms["planning"] = _elapsed_ms(mark)
        plan_dict = planned.model_dump() | {"rewritten": rewritten} | ({"error": failed} if failed else {})
        update: dict[str, Any] = {
            "plan": plan_dict,
            "language": language,
            "document_filter": resolve_document(planned.document, question, state.get("documents", [])),
        }
        if planned.ambiguous and _offers_readings(planned.clarification):
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

    async def retrieve(state: QAState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        ctx = runtime.context
        mark = time.perf_counter()
        plan = state["plan"]
        extra = [t for t in plan.get("terms", []) if t.lower() not in plan["question"].lower()]
        query = " ".join([plan["question"], *extra])
        document = state.get("document_filter")
        filters = Filters(document_ids=(UUID(document),)) if document else Filters()
        kwargs = {"project_id": ctx.project_id, "query": query, "profile": config.profile}
        result = await ctx.retriever.search(**kwargs, filters=filters, user_id=ctx.user_id)
        if document and not result.results:  # the named document holds nothing close: search all
            result = await ctx.retriever.search(**kwargs, user_id=ctx.user_id)
            document = None
        ctx.timings_ms["retrieval"] = _elapsed_ms(mark)
        return {"retrieved": result.results, "document_filter": document}

    async def gate(state: QAState) -> dict[str, Any]:
        decision = judge(question_stem(state["plan"]["question"]), state["retrieved"], config)
        update: dict[str, Any] = {"gate": decision.as_dict()}
        if not decision.passed:
            update |= _not_found(state, "not_found")
        return update

    def after_gate(state: QAState) -> Literal["answer", "answer_stream", "__end__"]:
        if not state["gate"]["passed"]:
            return END
        return "answer_stream" if state.get("stream") else "answer"

    async def answer(state: QAState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        ctx = runtime.context
        mark = time.perf_counter()
        chunks, messages = _answer_prompt(state, config)
        reply = await ask_structured(
            _capped(ctx.llm, config.answer_max_tokens),
            ModelAnswer,
            messages,
            mode=ctx.structured_mode,
            usage=ctx.usage,
        )
        ctx.timings_ms["generation"] = _elapsed_ms(mark)
        return _finish(state, chunks, reply.answer.strip(), reply.has_answer, reply.used_chunk_ids)

    async def answer_stream(state: QAState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """The same JSON answer as `answer`, the text of its `answer` field passed to the stream
        writer as it is decoded; nothing is shown when the model starts with has_answer false."""
        ctx, write = runtime.context, runtime.stream_writer
        if not streams_content(ctx.structured_mode):  # function calling: the answer comes in one piece
            update = await answer(state, runtime)
            write({"token": update["answer"]})
            return update
        mark = time.perf_counter()
        chunks, messages = _answer_prompt(state, config)
        llm = _capped(ctx.llm, config.answer_max_tokens)
        stream, sent = JsonStream(llm, ModelAnswer, messages, ctx.structured_mode), ""
        async for raw in stream:
            if bool_field(raw, "has_answer") is False:
                continue
            text = string_field(raw, "answer") or ""
            if len(text) > len(sent) and _leaks_instructions(text):
                continue  # it is repeating its instructions: nothing more of it is shown
            if len(text) > len(sent):
                if not sent:
                    ctx.timings_ms["first_token"] = _elapsed_ms(mark)
                write({"token": text[len(sent) :]})
                sent = text
        if stream.message is not None:
            ctx.usage.add(model_name(ctx.llm), stream.message)
        ctx.timings_ms["generation"] = _elapsed_ms(mark)
        raw = stream.raw
        try:
            reply = ModelAnswer.model_validate_json(raw)
            found, text, claimed = reply.has_answer, reply.answer.strip(), reply.used_chunk_ids
        except ValidationError:  # cut off or malformed: what was shown stands, with the ids it gave
            found, text, claimed = bool(sent.strip()), sent.strip(), int_list_field(raw, "used_chunk_ids")
        update = _finish(state, chunks, text, found, claimed)
        if not update["has_answer"]:
            write({"token": update["answer"]})
        return update

    return {
        "plan": plan,
        "after_plan": after_plan,
        "clarify": clarify,
        "retrieve": retrieve,
        "gate": gate,
        "after_gate": after_gate,
        "answer": answer,
        "answer_stream": answer_stream,
    }


def _answer_prompt(state: QAState, config: QAConfig) -> tuple[list[Any], list[Any]]:
    """The answer model reads the user's own words unless a thread made a rewrite necessary: a
    rewrite of a standalone question can only lose detail (code, options)."""
    chunks = state["retrieved"][: config.answer_chunks]
    question = state["plan"]["question"] if state.get("history") else state["question"]
    language = state["language"]
    return chunks, prompts.answer_messages(question, chunks, language, config.chunk_chars)


def _not_found(state: QAState, outcome: Literal["not_found", "declined", "unsupported"]) -> dict[str, Any]:
    return {
        "answer": prompts.NOT_FOUND.get(state["language"], prompts.NOT_FOUND["en"]),
        "has_answer": False,
        "citations": [],
        "outcome": outcome,
    }


def _finish(
    state: QAState, chunks: list[Any], text: str, has_answer: bool, claimed: list[int]
) -> dict[str, Any]:
    shown = {"selected_ids": [c.chunk_id for c in chunks], "claimed_ids": claimed}
    # Only ids of the chunks shown become citations: a passage that says "cite chunk 999999" gets nowhere.
    citations, invented = build_citations(claimed, chunks)
    if not has_answer or not text or _leaks_instructions(text):
        return shown | {"invented_ids": invented} | _not_found(state, "declined")
    if not citations:  # an answer resting on no excerpt it was shown is the model's own knowledge
        return shown | {"invented_ids": invented} | _not_found(state, "unsupported")
    return shown | {
        "answer": text,
        "has_answer": True,
        "citations": citations,
        "invented_ids": invented,
        "outcome": "answered",
    }


def _leaks_instructions(text: str) -> bool:
    """An answer that repeats the model's own instructions (a passage asked it to reveal them) is withheld."""
    return any(
        quotes_instructions(text, system) for system in (prompts.ANSWER_SYSTEM, prompts.PLANNER_SYSTEM)
    )


def build_graph(config: QAConfig = DEFAULT_CONFIG) -> Any:
    nodes = make_nodes(config)
    builder = StateGraph(QAState, context_schema=AgentContext, input_schema=QAInput, output_schema=QAOutput)
    for name in ("plan", "clarify", "retrieve", "gate", "answer", "answer_stream"):
        builder.add_node(name, nodes[name])
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", nodes["after_plan"], ["clarify", "retrieve"])
    builder.add_edge("clarify", END)
    builder.add_edge("retrieve", "gate")
    builder.add_conditional_edges("gate", nodes["after_gate"], ["answer", "answer_stream", END])
    builder.add_edge("answer", END)
    builder.add_edge("answer_stream", END)
    return builder.compile(name="rag_qa")


graph = build_graph()

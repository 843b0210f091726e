"""The RAG QA graph with a scripted fake chat model and a fake retriever: every branch, fast."""

import json
import math
import uuid
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.common.context import AgentContext
from agents.common.language import question_language
from agents.qa import build_graph
from agents.qa.config import QAConfig
from agents.qa.evidence import best_sentence
from agents.qa.excerpts import best_window
from agents.qa.gate import content_words, judge
from agents.qa.options import question_stem
from agents.qa.planning import named_document
from agents.qa.prompts import NOT_FOUND
from agents.qa.signals import field_logprobs, source_fit
from core.confidence import Calibration, KindModel, uncalibrated
from core.embeddings.thresholds import UNCALIBRATED, Thresholds
from core.retrieval import Candidate
from core.retrieval.types import RetrievalResult, StageTimings
from tests.chat_fakes import ListChat, StreamingScripted

DOC_OWNERSHIP = str(uuid.uuid4())
DOC_STRINGS = str(uuid.uuid4())
DOCUMENTS = [
    {"id": DOC_OWNERSHIP, "title": "What is Ownership?", "filename": "ch04-01-what-is-ownership.md"},
    {"id": DOC_STRINGS, "title": "Storing UTF-8 Encoded Text with Strings", "filename": "ch08-02-strings.md"},
]


def chunk(chunk_id: int, text: str, *, dense: float = 0.9, document_id: str = DOC_OWNERSHIP) -> Candidate:
    title = "What is Ownership?" if document_id == DOC_OWNERSHIP else "Strings"
    return Candidate(
        chunk_id=chunk_id,
        dense_similarity=dense,
        lexical_score=1.0,
        rerank_score=dense,
        row={
            "document_id": document_id,
            "document_title": title,
            "section_path": [title, "Ownership Rules"],
            "page_start": None,
            "page_end": None,
            "text": text,
            "context_header": f"{title} > Ownership Rules",
        },
    )


OWNERSHIP_CHUNKS = [
    chunk(
        11,
        "Each value in Rust has an owner. There can only be one owner at a time. When the owner goes"
        " out of scope, the value will be dropped.",
    ),
    chunk(
        12,
        "A String is made up of a pointer, a length and a capacity, stored on the stack; the"
        " contents live on the heap. Assigning s1 to s2 moves ownership, and s1 is invalidated.",
    ),
    chunk(
        13,
        "The String type manages data allocated on the heap and can store text of unknown size.",
        document_id=DOC_STRINGS,
    ),
]


@dataclass
class FakeRetriever:
    results: list[Candidate]
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def search(self, **kwargs: Any) -> RetrievalResult:
        self.calls.append(kwargs)
        filtered = self.results
        if kwargs.get("filters") and kwargs["filters"].document_ids:
            wanted = {str(d) for d in kwargs["filters"].document_ids}
            filtered = [c for c in self.results if c.row["document_id"] in wanted]
        return RetrievalResult(
            query=kwargs["query"],
            profile=kwargs["profile"],
            reranker="fake",
            results=filtered,
            dense=[],
            lexical=[],
            fused=[],
            reranked=filtered,
            timings=StageTimings(),
        )


def reply(**fields: Any) -> AIMessage:
    return AIMessage(content=json.dumps(fields))


def plan(question: str, **fields: Any) -> AIMessage:
    defaults: dict[str, Any] = {"terms": [], "document": "", "ambiguous": False, "clarification": ""}
    return reply(question=question, **(defaults | fields))


class RecordingFake(ListChat):
    """Also keeps the prompts it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(messages)
        return super()._generate(messages, *args, **kwargs)


# No fit, every signal computed (as `studyai calibrate` and QA_ALL_SIGNALS runs do): labels "medium".
RECORDING = replace(uncalibrated("", ""), all_signals=True)


def context(llm: Any, retriever: FakeRetriever, language: str = "auto") -> AgentContext:
    return AgentContext(
        project_id=uuid.uuid4(),
        retriever=retriever,
        llm=llm,  # type: ignore[arg-type]
        structured_mode="llama-grammar",
        language=language,
        user_id=uuid.uuid4(),
        confidence=RECORDING,
    )


def model_calls(ctx: AgentContext) -> int:
    return sum(entry["calls"] for entry in ctx.usage.by_model.values())


async def ask(ctx: AgentContext, question: str, qa: QAConfig | None = None, **inputs: Any) -> dict[str, Any]:
    graph = build_graph(qa or QAConfig())
    return await graph.ainvoke({"question": question, "documents": DOCUMENTS, **inputs}, context=ctx)


async def test_answer_cites_only_the_retrieved_chunks_it_claims() -> None:
    llm = ListChat(
        responses=[
            reply(answer="The value is dropped.", has_answer=True, used_chunk_ids=[11, 11, 12]),
        ]
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    ctx = context(llm, retriever)
    out = await ask(ctx, "what happens when an owner goes out of scope?")
    assert out["outcome"] == "answered" and out["has_answer"] is True
    assert out["answer"] == "The value is dropped."
    assert [c.chunk_id for c in out["citations"]] == [11, 12]  # repeats folded, claim order kept
    assert out["citations"][0].document_id == DOC_OWNERSHIP
    assert out["citations"][0].section_path == ["What is Ownership?", "Ownership Rules"]
    assert out["invented_ids"] == []
    assert retriever.calls[0]["profile"] == "qa"
    assert retriever.calls[0]["user_id"] == ctx.user_id and retriever.calls[0]["project_id"] == ctx.project_id
    assert retriever.calls[0]["query"] == "what happens when an owner goes out of scope?"  # as asked
    # the answer and its one-token self-check; a standalone question is not planned by the model
    assert model_calls(ctx) == 2 and llm.self_checks == 1
    assert {"planning", "retrieval", "generation", "confidence"} <= ctx.timings_ms.keys()
    # Uncalibrated (no fitted model pair): every answer is "medium", shown with its deciding sentence.
    assert out["confidence"]["label"] == "medium" and out["confidence"]["p"] is None
    assert out["confidence"]["signals"]["self_yes"] == pytest.approx(0.9)
    assert out["passages"][0]["chunk_id"] == 11 and out["passages"][0]["highlight"]


async def test_invented_citation_ids_are_dropped() -> None:
    llm = ListChat(
        responses=[
            reply(
                answer="Pointer, length and capacity on the stack.",
                has_answer=True,
                used_chunk_ids=[987654, 12, 13, 4242],
            ),
        ]
    )
    out = await ask(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "How is a String laid out in memory?")
    assert [c.chunk_id for c in out["citations"]] == [12, 13]
    assert out["invented_ids"] == [987654, 4242]
    assert out["claimed_ids"] == [987654, 12, 13, 4242]


async def test_a_chunk_retrieved_but_not_shown_to_the_model_is_not_citable() -> None:
    config = QAConfig(answer_chunks=2)
    llm = ListChat(
        responses=[
            reply(answer="Heap data.", has_answer=True, used_chunk_ids=[13, 11]),
        ]
    )
    ctx = context(llm, FakeRetriever(OWNERSHIP_CHUNKS))
    out = await build_graph(config).ainvoke({"question": "What does the String type manage?"}, context=ctx)
    assert out["selected_ids"] == [11, 12]
    assert [c.chunk_id for c in out["citations"]] == [11]
    assert out["invented_ids"] == [13]


async def test_ambiguous_question_asks_back_and_stops_before_retrieval() -> None:
    llm = ListChat(
        responses=[
            reply(
                question="How do I convert it?",
                terms=[],
                document="",
                ambiguous=True,
                clarification="Do you mean converting a String to a &str, or a number to a String?",
            ),
            reply(answer="must not be asked", has_answer=True, used_chunk_ids=[11]),
        ]
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    ctx = context(llm, retriever)
    history = [{"role": "user", "text": "What is a String?"}, {"role": "assistant", "text": "Text."}]
    out = await ask(ctx, "How do I convert it?", history=history)
    assert out["outcome"] == "clarification"
    assert out["clarification"].startswith("Do you mean converting")
    assert out["answer"] == out["clarification"] and out["has_answer"] is False and out["citations"] == []
    assert retriever.calls == [] and model_calls(ctx) == 1


async def test_a_clarification_about_what_the_user_already_said_is_not_asked() -> None:
    """Seen with the real 1.5B model: "and what about mutable ones?" asked back as "mutable or immutable?"."""
    llm = ListChat(
        responses=[
            plan(
                "What is a mutable reference in Rust?",
                ambiguous=True,
                clarification="Do you mean mutable references or immutable ones?",
            ),
            reply(answer="A value is dropped.", has_answer=True, used_chunk_ids=[11]),
        ]
    )
    history = [{"role": "user", "text": "What is a reference?"}, {"role": "assistant", "text": "A borrow."}]
    ctx = context(llm, FakeRetriever(OWNERSHIP_CHUNKS))
    out = await ask(ctx, "and what about mutable ones?", history=history)
    assert out["outcome"] == "answered" and out.get("clarification") is None


async def test_answer_citing_no_shown_chunk_is_not_given() -> None:
    llm = ListChat(
        responses=[
            reply(answer="Create an Ingress resource.", has_answer=True, used_chunk_ids=[8, 9]),
        ]
    )
    out = await ask(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "What is an ingress in this course?")
    assert out["outcome"] == "unsupported" and out["has_answer"] is False
    assert out["answer"] == NOT_FOUND["en"] and out["citations"] == [] and out["invented_ids"] == [8, 9]


@pytest.mark.parametrize("clarification", [" ", "Which one was meant?"])
async def test_ambiguous_without_alternatives_to_offer_is_answered(clarification: str) -> None:
    llm = ListChat(
        responses=[
            plan("What is an owner of a value?", ambiguous=True, clarification=clarification),
            reply(answer="The variable that holds a value.", has_answer=True, used_chunk_ids=[11]),
        ]
    )
    history = [{"role": "user", "text": "What is a value?"}, {"role": "assistant", "text": "Data."}]
    out = await ask(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "And what is its owner?", history=history)
    assert out["outcome"] == "answered" and not out.get("clarification")


@pytest.mark.parametrize(
    ("question", "language", "results"),
    [
        ("How do I configure a Kubernetes ingress?", "en", [chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.78)]),
        ("Como configuro um ingress do Kubernetes?", "pt", [chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.83)]),
        ("What is the capital of France?", "en", []),
    ],
)
async def test_nothing_relevant_answers_not_found_without_an_answer_call(
    question: str, language: str, results: list[Candidate]
) -> None:
    llm = ListChat(
        responses=[
            reply(answer="must not be asked", has_answer=True, used_chunk_ids=[11]),
        ]
    )
    ctx = context(llm, FakeRetriever(results))
    out = await ask(ctx, question)
    assert out["outcome"] == "not_found" and out["has_answer"] is False
    assert out["answer"] == NOT_FOUND[language]
    assert out["citations"] == [] and out["gate"]["passed"] is False
    assert model_calls(ctx) == 0 and "generation" not in ctx.timings_ms


async def test_model_that_finds_no_answer_gets_no_citations() -> None:
    llm = ListChat(
        responses=[
            reply(answer="It is not said.", has_answer=False, used_chunk_ids=[11]),
        ]
    )
    out = await ask(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "When was Rust's ownership designed?")
    assert out["outcome"] == "declined" and out["has_answer"] is False
    assert out["answer"] == NOT_FOUND["en"] and out["citations"] == []


async def test_follow_up_is_rewritten_with_the_history_before_retrieval() -> None:
    llm = RecordingFake(
        prompts=[],
        responses=[
            plan("What are the rules for mutable references?", terms=["&mut"]),  # model terms unused
            reply(answer="Only one at a time.", has_answer=True, used_chunk_ids=[12]),
        ],
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    history = [
        {"role": "user", "text": "What is a reference?"},
        {"role": "assistant", "text": "A pointer that borrows a value without owning it. " * 20},
    ]
    out = await ask(context(llm, retriever), "and what about mutable ones?", history=history)
    planner_prompt = llm.prompts[0][-1].content
    assert (
        "User: What is a reference?" in planner_prompt
        and "Last question: and what about mutable ones?" in planner_prompt
    )
    assert "Assistant: A pointer that borrows" in planner_prompt and len(planner_prompt) < 600  # trimmed
    assert "Question: What are the rules for mutable references?" in llm.prompts[1][-1].content
    assert retriever.calls[0]["query"] == "What are the rules for mutable references?"
    assert out["plan"]["question"] == "What are the rules for mutable references?"
    assert out["outcome"] == "answered"


async def test_a_standalone_question_reaches_retrieval_and_the_answer_model_as_asked() -> None:
    question = 'Why does `let s2 = s1; println!("{s1}");` fail to compile?'
    llm = RecordingFake(
        responses=[reply(answer="s1 was moved into s2.", has_answer=True, used_chunk_ids=[12])]
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    ctx = context(llm, retriever)
    out = await ask(ctx, question)
    assert out["plan"]["question"] == question and out["plan"]["model"] is False
    assert out["plan"]["terms"] == ['let s2 = s1; println!("{s1}");', "println!"]  # code, from the text
    assert retriever.calls[0]["query"] == question  # terms already in it are not repeated
    assert llm.prompts[0][-1].content.endswith(f"Question: {question}") and model_calls(ctx) == 2


async def test_follow_up_the_planner_left_as_is_gets_the_previous_question() -> None:
    history = [{"role": "user", "text": "What is a reference?"}, {"role": "assistant", "text": "A borrow."}]
    script = [
        plan("and what about mutable ones?"),
        reply(answer="Only one at a time.", has_answer=True, used_chunk_ids=[12]),
        reply(answer="A slice is a reference to part of a collection.", has_answer=True, used_chunk_ids=[12]),
    ]
    llm = ListChat(responses=script)
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    out = await ask(context(llm, retriever), "and what about mutable ones?", history=history)
    assert retriever.calls[0]["query"] == "What is a reference? and what about mutable ones?"
    assert out["plan"]["rewritten"] is False
    out = await ask(context(llm, retriever), "What is a slice?", history=history)  # stands alone: untouched
    assert retriever.calls[1]["query"] == "What is a slice?"


async def test_malformed_planner_reply_falls_back_to_the_question() -> None:
    llm = ListChat(
        responses=[
            AIMessage(content="{not json"),
            AIMessage(content="still not json"),
            reply(answer="The value is dropped.", has_answer=True, used_chunk_ids=[11]),
        ]
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    history = [{"role": "user", "text": "What is an owner?"}, {"role": "assistant", "text": "A variable."}]
    out = await ask(context(llm, retriever), "and what happens when it goes out of scope?", history=history)
    assert "error" in out["plan"]
    assert retriever.calls[0]["query"] == "What is an owner? and what happens when it goes out of scope?"
    assert out["outcome"] == "answered"


async def test_named_document_narrows_retrieval_but_a_model_guess_does_not() -> None:
    llm = ListChat(
        responses=[
            reply(answer="Heap data.", has_answer=True, used_chunk_ids=[13]),
        ]
    )
    retriever = FakeRetriever(OWNERSHIP_CHUNKS)
    out = await ask(context(llm, retriever), "In ch08-02-strings, what does the String type manage?")
    assert retriever.calls[0]["filters"].document_ids == (uuid.UUID(DOC_STRINGS),)
    assert out["document_filter"] == DOC_STRINGS and out["selected_ids"] == [13]

    assert named_document("What does the Strings type manage?", DOCUMENTS) is None  # a one-word topic
    assert named_document("Per 'what is ownership?', who owns a value?", DOCUMENTS) == DOC_OWNERSHIP
    assert named_document("a question", DOCUMENTS) is None


async def stream(
    ctx: AgentContext, question: str, qa: QAConfig | None = None
) -> tuple[list[str], dict[str, Any]]:
    tokens: list[str] = []
    final: dict[str, Any] = {}
    async for mode, payload in build_graph(qa or QAConfig()).astream(
        {"question": question, "stream": True}, context=ctx, stream_mode=["custom", "values"]
    ):
        if mode == "custom" and payload.get("reset"):
            tokens.clear()
        elif mode == "custom" and "evidence" in payload:
            continue
        elif mode == "custom":
            tokens.append(payload["token"])
        else:
            final = payload
    return tokens, final


def streaming(*replies: AIMessage) -> StreamingScripted:
    """Streams each reply in whitespace-separated pieces, as a server would token by token."""
    return StreamingScripted(messages=iter(replies))


async def test_streamed_answer_sends_the_answer_text_as_it_arrives() -> None:
    answer = 'The value is "dropped",\nand there can only be one owner at a time.'
    llm = streaming(
        reply(has_answer=True, answer=answer, used_chunk_ids=[11, 77]),
    )
    ctx = context(llm, FakeRetriever(OWNERSHIP_CHUNKS))
    tokens, out = await stream(ctx, "What happens when the owner goes out of scope?")
    assert len(tokens) > 3 and "".join(tokens) == answer  # JSON escapes decoded, no JSON shown
    assert out["answer"] == answer and out["has_answer"] is True
    assert [c.chunk_id for c in out["citations"]] == [11] and out["invented_ids"] == [77]
    assert "first_token" in ctx.timings_ms and model_calls(ctx) == 2  # the answer, its self-check


async def test_an_answer_from_the_models_own_knowledge_is_withheld() -> None:
    """Cited, but with words the excerpts do not hold: how the 1.5B model answers what is absent."""
    answer = "Call std::thread::spawn with a closure, then join the handle to wait for the thread."
    llm = streaming(reply(has_answer=True, answer=answer, used_chunk_ids=[11]))
    tokens, out = await stream(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "How do I spawn a thread?")
    assert out["outcome"] == "unsupported" and out["has_answer"] is False and out["citations"] == []
    assert out["answer"] == NOT_FOUND["en"] and out["support"] is not None and out["support"] < 0.5
    assert out["withheld"] == answer  # for the asker's debug view
    assert tokens == [NOT_FOUND["en"]]  # what streamed was withdrawn (a `reset`), then the reply


async def test_streamed_answer_the_model_declines_shows_only_not_found() -> None:
    llm = streaming(
        reply(has_answer=False, answer="The excerpts do not say who designed it.", used_chunk_ids=[11]),
    )
    tokens, out = await stream(
        context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "Who designed the borrow checker?"
    )
    assert tokens == [NOT_FOUND["en"]]
    assert out["has_answer"] is False and out["citations"] == [] and out["outcome"] == "declined"


async def test_streamed_answer_cut_off_keeps_what_was_shown() -> None:
    llm = streaming(
        AIMessage(content='{"has_answer": true, "answer": "It is dropped.", "used_chunk_ids": [12, 1'),
    )
    tokens, out = await stream(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "What happens to the value?")
    assert "".join(tokens) == "It is dropped." and out["answer"] == "It is dropped."
    assert [c.chunk_id for c in out["citations"]] == [12] and out["invented_ids"] == [1]


def gate_thresholds(strong: float, minimum: float) -> Thresholds:
    return replace(UNCALIBRATED, gate_dense_strong=strong, gate_dense_min=minimum, source="test")


def test_gate_thresholds() -> None:
    config, limits = QAConfig(coverage_min=0.5), gate_thresholds(0.9, 0.8)
    related = [chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.83)]
    assert judge("When is a value dropped by its owner?", related, config, limits).passed
    unrelated = judge("How do I configure a Kubernetes ingress?", related, config, limits)
    assert not unrelated.passed and set(unrelated.missing) == {"configure", "kubernetes", "ingress"}
    assert judge("Kubernetes?", [chunk(11, "x", dense=0.9)], config, limits).passed  # very close alone passes
    low = [chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.79)]
    assert not judge("owner value dropped", low, config, limits).passed
    # An embedding model without calibrated values: the words alone decide, whatever the cosine.
    assert judge("owner value dropped", low, config, UNCALIBRATED).passed
    assert not judge("Kubernetes?", [chunk(11, "x", dense=0.99)], config, UNCALIBRATED).passed


def test_below_the_minimum_only_a_question_with_every_word_in_the_best_chunks_passes_to_the_floor() -> None:
    config = QAConfig(coverage_min=0.8)
    limits = replace(gate_thresholds(0.9, 0.83), gate_dense_floor=0.81)
    question = "What happens to a value when its owner goes out of scope?"
    text = "When the owner goes out of scope, the value will be dropped."
    near = judge(question, [chunk(11, text, dense=0.824)], config, limits)
    assert near.passed and near.missing == () and "every word" in near.reason
    assert not judge(question, [chunk(11, text, dense=0.805)], config, limits).passed  # below the floor
    elsewhere = "What happens to a value when its owner leaves a thread?"
    one_word_short = judge(elsewhere, [chunk(11, text, dense=0.824)], config, limits)
    assert not one_word_short.passed and "thread" in one_word_short.missing
    assert not judge(
        question, [chunk(11, text, dense=0.824)], config, replace(limits, gate_dense_floor=None)
    ).passed
    # A question with options has no words of its own to cover: the floor is not for it.
    assert not judge(question, [chunk(11, text, dense=0.824)], config, limits, choice=True).passed


async def test_the_gate_uses_the_embedding_models_thresholds_from_the_context() -> None:
    llm = ListChat(responses=[reply(answer="Dropped.", has_answer=True, used_chunk_ids=[11])])
    retriever = FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.84)])
    ctx = context(llm, retriever)
    assert (await ask(ctx, "When is a value dropped by its owner?"))["gate"]["passed"]
    ctx = context(llm, retriever)
    ctx.thresholds = gate_thresholds(0.95, 0.85)
    out = await ask(ctx, "When is a value dropped by its owner?")
    assert not out["gate"]["passed"] and out["outcome"] == "not_found"
    assert content_words("What is the String's capacity, and how does it work?") == ["string", "capacity"]


def test_question_language_and_helpers() -> None:
    assert question_language("O que é ownership em Rust?") == "pt"
    assert question_language("What is ownership in Rust?") == "en"
    assert question_language("ownership?", "pt") == "pt"
    text = (
        "Intro paragraph.\n\n" + ("filler words here. " * 30) + "\n\nThe capacity of a String is the memory."
    )
    window = best_window(text, "What is a String's capacity?", 200)
    assert "capacity of a String" in window and len(window) <= 200


QUIZ = (
    "Which statement best describes when a value is dropped?\n\nOptions:\n"
    "A) When its owner goes out of scope\nB) When the garbage collector sweeps the arena\n"
    "C) When a semaphore counter reaches zero\n\nWhich option is correct? Give its letter and explain."
)


def test_quiz_options_are_left_out_of_the_gate_coverage() -> None:
    assert question_stem(QUIZ) == "Which statement best describes when a value is dropped?"
    assert question_stem("What does A) mean here?") == "What does A) mean here?"  # one line is no list
    # The wrong options' words (garbage, collector, semaphore...) are absent from the material by design.
    config, limits = QAConfig(coverage_min=0.5), gate_thresholds(0.95, 0.8)
    related = [chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)]
    assert not judge(QUIZ, related, config, limits).passed
    assert judge(question_stem(QUIZ), related, config, limits).passed
    assert judge("Which statement is true?", related, config, limits, choice=True).passed


class OptionReader(ListChat):
    """Gives each letter of the options in the prompt a probability: `right` text most, and a bias
    towards "A" (as small models have); scripted replies for anything else."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    right: str = ""
    a_bias: float = 0.0
    logprobs: bool = True

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(messages)
        prompt = str(messages[-1].content)
        if prompt.endswith("Is the proposed answer correct?"):  # one option judged alone: no position bias
            proposed = prompt.split("Proposed answer: ")[1]
            p_yes = 0.8 if self.right and proposed.startswith(self.right) else 0.3
            top = [
                {"token": "yes", "logprob": math.log(p_yes)},
                {"token": "no", "logprob": math.log(1 - p_yes)},
            ]
            metadata = (
                {"logprobs": {"content": [{"token": "yes", "top_logprobs": top}]}} if self.logprobs else {}
            )
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage(content="yes", response_metadata=metadata))]
            )
        if not prompt.endswith("Answer:"):
            return super()._generate(messages, *args, **kwargs)
        lines = [line for line in prompt.splitlines() if len(line) > 3 and line[1] == ")"]
        weights = {line[0]: (0.6 if self.right in line else 0.1) + (self.a_bias if line[0] == "A" else 0)
                   for line in lines}  # fmt: skip
        top = [
            {"token": letter, "logprob": math.log(w / sum(weights.values()))} for letter, w in weights.items()
        ]
        metadata = {"logprobs": {"content": [{"token": "A", "top_logprobs": top}]}} if self.logprobs else {}
        message = AIMessage(content=max(weights, key=lambda k: weights[k]), response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])


async def test_a_question_with_options_is_answered_by_scoring_them() -> None:
    llm = OptionReader(
        right="When its owner goes out of scope",
        responses=[reply(explanation="The excerpt says the value is dropped then.", used_chunk_ids=[11])],
    )
    retriever = FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)])
    ctx = context(llm, retriever)
    out = await ask(ctx, QUIZ, QAConfig(choice_explain="model", choice_orders=2))
    assert out["gate"]["passed"] and out["outcome"] == "answered" and out["has_answer"] is True
    assert out["answer"].startswith("A) When its owner goes out of scope\n\nThe excerpt says")
    assert out["choice"]["letter"] == "A" and out["choice"]["orders"] == 2
    assert out["choice"]["probabilities"][0] > 0.5 and out["choice"]["method"] == "letters"
    assert [c.chunk_id for c in out["citations"]] == [11]
    scoring = [str(p[-1].content) for p in llm.prompts[:2]]
    assert "A) When its owner goes out of scope" in scoring[0]  # as the user ordered them
    assert "C) When its owner goes out of scope" in scoring[1]  # reversed: position bias cancels
    # two orders of letters, the self-check, one explanation, two closed-book orders; no planner call
    assert model_calls(ctx) == 6 and llm.self_checks == 1
    assert out["choice"]["closed"][0] > 0.5  # the fake knows the answer without the excerpts too
    signals = out["confidence"]["signals"]
    assert signals["orders_agree"] == 1.0 and signals["closed_agree"] == 1.0 and signals["margin"] > 0
    assert signals["option_held"] > 0.5 and signals["option_held_lead"] > 0  # the passage words option A


async def test_options_judged_alone_have_no_position_bias() -> None:
    llm = OptionReader(right="When its owner goes out of scope", responses=[reply(explanation="")])
    ctx = context(llm, FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)]))
    qa = QAConfig(choice_method="both", choice_explain="model", choice_orders=2)
    out = await build_graph(qa).ainvoke({"question": QUIZ}, context=ctx)
    assert out["choice"]["method"] == "both" and out["choice"]["letter"] == "A"
    assert out["choice"]["verify"][0] > max(out["choice"]["verify"][1:])
    # two orders of letters, three options judged, the self-check, one explanation, two closed-book orders
    assert model_calls(ctx) == 9


async def test_option_scores_from_several_orders_outweigh_a_bias_for_the_first_letter() -> None:
    quiz = QUIZ.replace("A) When its owner goes out of scope", "A) When the program exits").replace(
        "C) When a semaphore counter reaches zero", "C) When its owner goes out of scope"
    )
    llm = OptionReader(
        right="When its owner goes out of scope", a_bias=0.45, responses=[reply(explanation="")]
    )
    ctx = context(llm, FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)]))
    out = await ask(ctx, quiz, QAConfig(choice_orders=2))
    assert out["choice"]["letter"] == "C" and out["answer"].startswith("C) When its owner goes out of scope")
    assert [c.chunk_id for c in out["citations"]] == [11]  # no ids given: the passage stating the option


async def test_options_are_never_an_ambiguity_and_without_log_probs_the_model_names_a_letter() -> None:
    llm = OptionReader(
        logprobs=False,
        responses=[reply(letter="B"), reply(explanation="Because.", used_chunk_ids=[11])],
    )
    history = [{"role": "user", "text": "What is dropping?"}, {"role": "assistant", "text": "Freeing."}]
    ctx = context(llm, FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)]))
    out = await ask(ctx, QUIZ, QAConfig(choice_explain="model"), history=history)
    assert out["outcome"] == "answered" and out["choice"]["letter"] == "B" and out["choice"]["orders"] == 0
    assert out["answer"].startswith("B) When the garbage collector sweeps the arena")


async def test_a_streamed_choice_shows_the_option_first() -> None:
    llm = OptionReader(
        right="When its owner goes out of scope",
        responses=[reply(explanation="It is dropped.", used_chunk_ids=[11])],
    )
    ctx = context(llm, FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)]))
    tokens, out = await stream(ctx, QUIZ, QAConfig(choice_explain="model"))
    assert tokens[0] == "A) When its owner goes out of scope"
    assert "".join(tokens) == out["answer"] == "A) When its owner goes out of scope\n\nIt is dropped."


NOTHING_PAYS = Calibration(
    "c",
    "e",
    {
        "choice": KindModel((), (), (), (), 0.2, 1.01, 0.0),
        "answer": KindModel((), (), (), (), 1.0, 1.01, 0.0),
    },
)


async def test_where_no_check_pays_a_choice_is_its_scoring_and_the_passage_that_states_it() -> None:
    llm = OptionReader(
        right="When its owner goes out of scope", responses=[]
    )  # a scripted reply fails the test
    ctx = replace(
        context(llm, FakeRetriever([chunk(11, OWNERSHIP_CHUNKS[0].text, dense=0.85)])),
        confidence=NOTHING_PAYS,
    )
    tokens, out = await stream(ctx, QUIZ)
    # The scoring orders only: no self-check, no closed-book choice, no explanation written by the model.
    assert model_calls(ctx) == QAConfig().choice_orders and llm.self_checks == 0
    assert out["choice"]["closed"] is None and "self_yes" not in out["confidence"]["signals"]
    quoted = best_sentence(
        OWNERSHIP_CHUNKS[0].text, "When its owner goes out of scope " + question_stem(QUIZ)
    )[0]
    assert out["answer"] == f"A) When its owner goes out of scope\n\nThe passage it rests on: “{quoted}”"
    assert "".join(tokens) == out["answer"] and [c.chunk_id for c in out["citations"]] == [11]
    assert out["confidence"]["label"] == "medium" and out["passages"][0]["chunk_id"] == 11


async def test_where_the_self_check_pays_nothing_a_free_answer_is_one_generation() -> None:
    llm = ListChat(responses=[reply(answer="The value is dropped.", has_answer=True, used_chunk_ids=[11])])
    ctx = replace(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), confidence=NOTHING_PAYS)
    out = await ask(ctx, "What happens to a value when its owner goes out of scope?")
    assert out["outcome"] == "answered" and model_calls(ctx) == 1
    assert "self_yes" not in out["confidence"]["signals"]
    for confidence, calls in ((uncalibrated("", ""), 1), (RECORDING, 2)):
        # No fit: the label is "medium" whatever the check says, so it is asked only to be recorded.
        llm = ListChat(
            responses=[reply(answer="The value is dropped.", has_answer=True, used_chunk_ids=[11])]
        )
        ctx = replace(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), confidence=confidence)
        await ask(ctx, "What happens to a value when its owner goes out of scope?")
        assert model_calls(ctx) == calls


class CutAtTheCap(GenericFakeChatModel):
    """Streams its reply, then fails as the OpenAI client does when a JSON reply reaches max_tokens."""

    async def _astream(self, *args: Any, **kwargs: Any) -> Any:
        async for chunk in super()._astream(*args, **kwargs):
            yield chunk
        raise openai.LengthFinishReasonError(completion=SimpleNamespace(usage=None))  # type: ignore[arg-type]


async def test_a_streamed_answer_cut_at_its_token_cap_keeps_what_was_shown() -> None:
    cut = AIMessage(content='{"has_answer": true, "answer": "It is dropped when')
    llm = CutAtTheCap(messages=iter([cut]))
    tokens, out = await stream(context(llm, FakeRetriever(OWNERSHIP_CHUNKS)), "What happens to the value?")
    # No error: cut before it named an excerpt, what was shown is withdrawn for the not-found reply.
    assert out["outcome"] == "unsupported" and tokens == [NOT_FOUND["en"]] == [out["answer"]]


def test_a_passages_highlight_is_a_whole_sentence_across_wrapped_lines() -> None:
    first = "Assigning a String moves it: the first variable is no longer valid, so the memory"
    text = f"{first}\nis freed exactly once.\nAnother sentence."
    sentence, share = best_sentence(text, "When is the memory freed?")
    assert sentence == f"{first} is freed exactly once." and share == 1.0


def test_the_answers_own_tokens_log_probabilities_are_a_signal() -> None:
    raw = '{"has_answer": true, "answer": "It is \\"dropped\\".", "used_chunk_ids": [11]}'
    pieces = [
        '{"has_answer": true, "answer": "',
        "It",
        " is",
        ' \\"dropped',
        '\\".',
        '", "used_chunk_ids": [11]}',
    ]
    logprobs = [-0.01, -0.5, -0.1, -2.0, -0.3, -0.01]
    content = [{"token": t, "logprob": lp} for t, lp in zip(pieces, logprobs, strict=True)]
    message = AIMessage(content=raw, response_metadata={"logprobs": {"content": content}})
    got = field_logprobs(message, raw, "answer")
    assert got["answer_logprob_min"] == -2.0  # the JSON around the answer is not counted
    assert got["answer_logprob_mean"] == pytest.approx((-0.5 - 0.1 - 2.0 - 0.3) / 4)
    assert field_logprobs(AIMessage(content=raw), raw, "answer") == {}  # no log-probabilities: no signal


def test_an_answer_copied_from_a_sentence_about_something_else_fits_its_question_less() -> None:
    passage = (
        "The borrow checker compares scopes to decide whether all borrows are valid. "
        "Every reference has a lifetime. Structs can hold references. Modules organise code. "
        "Cargo downloads the crates a project depends on from crates.io."
    )  # an answer's source sentence is read with its neighbours
    question = "What does the borrow checker compare to decide whether borrows are valid?"
    assert source_fit("It compares scopes.", question, [passage]) > 0.5
    assert source_fit("Crates from crates.io.", question, [passage]) < 0.3

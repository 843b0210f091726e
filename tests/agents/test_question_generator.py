"""The Question Generator graph with a scripted fake chat model, on a real project (Postgres, chunks
indexed by the real worker, real embeddings): every branch of selection, checking and storing."""

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

import httpx
import numpy as np
import psycopg
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.common.context import AgentContext
from agents.question_generator.checks import answer_support
from agents.question_generator.config import GeneratorConfig
from agents.question_generator.graph import graph
from core.embeddings.models import make_embeddings
from core.retrieval import RetrievalConfig, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store import questions
from core.store.pool import open_pool
from tests.conftest import UserFactory, create_project, index_documents

# Six sections per document, each longer than the chunker's minimum: six chunks of their own.
OWNERSHIP = """# Ownership

## Moves

When a String is assigned to another variable the value is moved, and the first variable can no longer
be used. Rust frees heap memory without a garbage collector: exactly one owner drops the value when it
goes out of scope, so nothing is freed twice.

## Borrowing

A reference borrows a value without taking ownership. Mutable references are exclusive: only one may
exist at a time, and no shared reference may exist alongside it. The borrow checker enforces these
rules when the program is compiled.

## Clone

Calling clone on a String copies the heap data as well as the pointer, length and capacity, so both
variables stay valid afterwards. Cloning can be expensive, which is why Rust never does it implicitly
when a value is assigned.

## Copy types

Integers, booleans, floating point numbers and characters implement the Copy trait. Their values live
entirely on the stack, so assigning one to another variable copies the bits and the original stays usable.

## Dangling references

The compiler guarantees that references never dangle: a function cannot return a reference to a String
it created, because the String is dropped when the function ends. Returning the String itself moves it.

## Slices

A string slice is a reference to a part of a String, written with a range such as &s[0..5]. Slices keep
the borrow rules: while a slice exists, the String it points into cannot be cleared or changed.
"""

STRUCTS = """# Structs

## Defining

A struct groups named fields, like a User with an email and a sign-in count. Each field has a name and a
type, and an instance gives every field a concrete value in any order it likes.

## Field init shorthand

When a function parameter has the same name as a field, the field init shorthand lets you write the name
once, as in User { email, username }, instead of repeating email: email for every such field.

## Update syntax

Struct update syntax creates an instance from another one: ..user1 fills every field not set explicitly.
Because it moves fields like String, user1 may be unusable afterwards as a whole.

## Tuple structs

Tuple structs such as struct Color(i32, i32, i32) have a name but unnamed fields. Color and Point are
different types even when their fields have the same types, so one cannot be passed for the other.

## Methods

Methods are defined in an impl block and take self as their first parameter. They are called with dot
syntax on an instance; &self borrows the instance immutably and &mut self borrows it mutably.

## Associated functions

Functions in an impl block without self are associated functions, often used as constructors such as
Rectangle::square(3). They are called with the struct name and the :: syntax, not with a dot.
"""


@dataclass
class Project:
    id: UUID
    user_id: UUID
    documents: dict[str, UUID]
    chunks: dict[int, dict[str, Any]]  # chunk id -> row


async def course_project(
    client: httpx.AsyncClient, make_user: UserFactory, db: psycopg.AsyncConnection[dict[str, Any]], name: str
) -> Project:
    """The ownership and structs documents indexed in a new project of a new user."""
    headers = await make_user(name)
    project_id = await create_project(client, headers, name=name, language="en")
    ids = await index_documents(
        client, headers, project_id, {"ownership.md": OWNERSHIP, "structs.md": STRUCTS}
    )
    rows = await (
        await db.execute(
            "SELECT id, document_id, section_path, text FROM chunks WHERE project_id = %s", (project_id,)
        )
    ).fetchall()
    documents = {name: UUID(document_id) for name, document_id in ids.items()}
    return Project(UUID(project_id), headers.id, documents, {row["id"]: row for row in rows})


@pytest.fixture(scope="module")
async def project(
    client: httpx.AsyncClient,
    make_user: UserFactory,
    worker: subprocess.Popen[bytes],
    db: psycopg.AsyncConnection[dict[str, Any]],
) -> Project:
    made = await course_project(client, make_user, db, "generator")
    assert len(made.chunks) >= 12
    return made


@pytest.fixture(scope="module")
async def retriever(settings: Settings, services: ServiceUrls) -> AsyncIterator[Retriever]:
    pool = await open_pool(services.database_url, max_size=4)
    embeddings = await asyncio.to_thread(make_embeddings, settings)
    yield Retriever(pool, embeddings, make_reranker(settings), RetrievalConfig.from_settings(settings))
    await pool.close()


@pytest.fixture(autouse=True)
async def empty_bank(project: Project, db: psycopg.AsyncConnection[dict[str, Any]]) -> None:
    await db.execute("DELETE FROM questions WHERE project_id = %s", (project.id,))


Step = str | Callable[[str], str]


class ScriptedChat(BaseChatModel):
    """Replies in script order; a callable step computes its reply from the prompt (to echo the chunk
    ids it was shown), an AIMessage step is returned as it is. A call beyond the script fails the test."""

    script: list[Any]
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = "\n".join(str(message.content) for message in messages)
        if len(self.prompts) >= len(self.script):
            raise AssertionError(f"unscripted model call #{len(self.prompts) + 1}:\n{prompt[-600:]}")
        step = self.script[len(self.prompts)]
        self.prompts.append(prompt)
        if isinstance(step, AIMessage):  # a reply with metadata (token log-probabilities)
            return ChatResult(generations=[ChatGeneration(message=step)])
        content = step(prompt) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content))])


def shown(prompt: str) -> dict[int, str]:
    """The source chunks in a generation prompt: id -> text."""
    return {int(m[1]): m[2] for m in re.finditer(r"^\[(\d+)\] [^:\n]*: (.*)$", prompt, re.MULTILINE)}


def reply(
    question: str,
    *,
    answer: str | None = None,
    sources: list[int] | None = None,
    confidence: float = 0.9,
    distractors: list[str] | None = None,
) -> Callable[[str], str]:
    """A reply to whatever the prompt asks: by default the answer is copied from the first source."""

    def step(prompt: str) -> str:
        given = shown(prompt)
        first_id, first_text = next(iter(given.items()))
        body: dict[str, Any] = {
            "question": question,
            "answer": answer if answer is not None else " ".join(first_text.split()[:8]),
            "explanation": "The source says so.",
            "difficulty": "medium",
            "confidence": confidence,
            "sources": sources if sources is not None else [first_id],
        }
        if "multiple-choice" in prompt:
            body["distractors"] = distractors or ["A stack frame", "A garbage collector", "A thread pool"]
        return json.dumps(body)

    return step


def context(project: Project, retriever: Retriever, llm: BaseChatModel, language: str = "en") -> AgentContext:
    return AgentContext(
        project_id=project.id,
        retriever=retriever,
        llm=llm,
        structured_mode="llama-grammar",
        language=language,
        user_id=project.user_id,
    )


async def run(ctx: AgentContext, **inputs: Any) -> dict[str, Any]:
    return await graph.ainvoke(inputs, context=ctx)


SINGLE = GeneratorConfig(chunks_per_question=1)  # one chunk per call: more calls available in a small doc


async def test_generates_valid_questions_of_each_type_from_a_document(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable after a String is moved to another variable?"),
            reply("How are methods defined on a struct?"),
            reply("Which kinds of values implement the Copy trait?"),
        ]
    )
    ctx = context(project, retriever, llm)
    document = project.documents["ownership.md"]
    out = await run(ctx, n=3, document_id=document, topic="Ownership")
    saved = out["saved"]
    assert [q.type for q in saved] == ["multiple_choice", "short_answer", "application"]
    assert out["rejected"] == [] and out["reason"] is None
    for question, prompt in zip(saved, llm.prompts, strict=True):
        assert question.status == "active" and question.support == 1.0
        assert question.document_id == document
        assert set(question.source_chunk_ids) <= set(shown(prompt))  # only what the model was shown
        assert all(project.chunks[i]["document_id"] == document for i in question.source_chunk_ids)
        assert question.section_path == project.chunks[question.source_chunk_ids[0]]["section_path"]
        assert len(prompt) < 2200  # short prompts: the 1.5B model reads ~100 tokens/s
    assert saved[0].distractors == ["A stack frame", "A garbage collector", "A thread pool"]
    assert saved[1].distractors == []
    assert "multiple-choice" in llm.prompts[0] and "short-answer" in llm.prompts[1]
    assert "application question" in llm.prompts[2]
    # Each call gets its own sources: three different groups of chunks.
    assert len({tuple(sorted(shown(p))) for p in llm.prompts}) == 3
    stored = await retriever_rows(retriever, project)
    assert {row.id for row in stored} == {q.id for q in saved}
    assert {"sources", "generate", "embed", "save"} <= ctx.timings_ms.keys()
    assert sum(entry["calls"] for entry in ctx.usage.by_model.values()) == 3


async def retriever_rows(retriever: Retriever, project: Project) -> list[questions.Question]:
    async with retriever.pool.connection() as conn:
        return await questions.list_questions(
            conn, project_id=project.id, user_id=project.user_id, statuses=["active", "review", "archived"]
        )


async def test_low_confidence_question_goes_to_review(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            # Sure of itself, but the answer is nowhere in the source: review.
            reply(
                "How often does the runtime collect unused memory?",
                answer="Every few seconds, in a background thread",
                confidence=0.95,
            ),
            # Unsure, but the answer is the source's own words: active.
            reply("What happens to the first variable after a String is moved?", confidence=0.2),
        ]
    )
    out = await run(
        context(project, retriever, llm),
        n=2,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    low, high = out["saved"]
    assert low.status == "review" and low.support < 0.3
    assert low.confidence == pytest.approx(0.4 * 0.95 + 0.6 * low.support, abs=1e-3)
    assert low.confidence < SINGLE.confidence_threshold
    assert high.status == "active" and high.confidence == pytest.approx(0.4 * 0.2 + 0.6 * 1.0, abs=1e-3)
    assert high.model_confidence == pytest.approx(0.2)


async def test_question_pointing_at_its_source_goes_to_review(project: Project, retriever: Retriever) -> None:
    """Students never see the chunk, so "according to the text" cannot be answered."""
    llm = ScriptedChat(script=[reply("What does the source text say about moves?", confidence=1.0)])
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
    )
    [saved] = out["saved"]
    assert saved.confidence == pytest.approx(1.0) and saved.status == "review"


async def test_confidence_threshold_is_configurable(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[reply("What does clone copy?", confidence=0.9)])
    strict = replace(SINGLE, confidence_threshold=0.99)
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=strict,
    )
    assert out["saved"][0].status == "review" and out["saved"][0].confidence == pytest.approx(0.96)


async def test_duplicate_of_a_stored_question_is_skipped(project: Project, retriever: Retriever) -> None:
    first = await run(
        context(
            project,
            retriever,
            ScriptedChat(
                script=[
                    reply("What happens to the first variable after a String is moved to another variable?")
                ]
            ),
        ),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    original = first["saved"][0]
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable once a String has been moved into another variable?"),
            reply("How many mutable references to a value may exist at the same time?"),
        ]
    )
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    [skipped] = out["rejected"]
    assert skipped.reason == "duplicate" and skipped.duplicate_of == original.id
    assert skipped.similarity >= 0.92
    # The skipped one was replaced by another call.
    assert [q.question for q in out["saved"]] == [
        "How many mutable references to a value may exist at the same time?"
    ]
    assert len(await retriever_rows(retriever, project)) == 2


async def test_duplicate_within_one_run_is_skipped(project: Project, retriever: Retriever) -> None:
    same = "Which keyword makes a variable mutable?"
    llm = ScriptedChat(script=[reply(same), reply(same + " "), reply("How are methods defined on a struct?")])
    out = await run(
        context(project, retriever, llm),
        n=2,
        document_id=project.documents["structs.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    assert [q.question for q in out["saved"]] == [same, "How are methods defined on a struct?"]
    [skipped] = out["rejected"]
    assert skipped.reason == "duplicate" and skipped.duplicate_of is None and skipped.similarity > 0.99


async def test_near_duplicate_cannot_be_inserted_twice(project: Project, retriever: Retriever) -> None:
    """The store's guarded insert (the race between two runs), without the graph's earlier check."""
    text = "What does the borrow checker enforce?"
    embedding = np.asarray(retriever.embeddings.embed_query(text), dtype=np.float32)
    chunk_id = next(iter(project.chunks))
    draft = questions.NewQuestion(
        document_id=project.chunks[chunk_id]["document_id"],
        section_path=[],
        type="short_answer",
        question=text,
        answer="The borrow rules",
        distractors=[],
        explanation="x",
        difficulty="easy",
        confidence=0.9,
        model_confidence=0.9,
        support=1.0,
        status="active",
        source_chunk_ids=[chunk_id],
        embedding=embedding,
    )
    async with retriever.pool.connection() as conn:
        stored = await questions.insert_question(
            conn, project_id=project.id, user_id=project.user_id, question=draft, duplicate_similarity=0.92
        )
        again = await questions.insert_question(
            conn, project_id=project.id, user_id=project.user_id, question=draft, duplicate_similarity=0.92
        )
    assert stored is not None and again is None


async def test_invented_source_ids_are_dropped(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            reply("What does a string slice refer to?", sources=[987654321]),  # nothing real: discarded
            lambda prompt: reply("What does clone copy?", sources=[987654321, *shown(prompt)])(prompt),
        ]
    )
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    [rejected] = out["rejected"]
    assert rejected.reason == "no_valid_source" and "987654321" in rejected.detail
    [saved] = out["saved"]
    assert saved.source_chunk_ids == list(shown(llm.prompts[1]))
    assert 987654321 not in saved.source_chunk_ids


@pytest.mark.parametrize(
    "distractors",
    [
        ["the value is moved", "It is copied", "It is cloned"],  # the answer again, other case and dot
        ["It is copied", "it is copied", "It is cloned"],  # two the same
        ["It is copied", "", "It is cloned"],  # an empty one
    ],
    ids=["equals-answer", "repeated", "empty"],
)
async def test_multiple_choice_needs_three_distinct_wrong_options(
    project: Project, retriever: Retriever, distractors: list[str]
) -> None:
    llm = ScriptedChat(
        script=[
            reply(
                "What happens to a String assigned to another variable?",
                answer="The value is moved.",
                distractors=distractors,
            )
        ]
    )
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("multiple_choice",),
        config=replace(SINGLE, extra_calls=0),
    )
    assert out["saved"] == []
    assert [r.reason for r in out["rejected"]] == ["bad_distractors"]


async def test_empty_fields_and_unparseable_replies_are_discarded(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            "this is not JSON",
            "neither is this",  # the one retry ask_structured allows
            reply("   ", answer="moved"),
            reply("What happens to the first variable after a String is moved?"),
        ]
    )
    out = await run(
        context(project, retriever, llm),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
        config=SINGLE,
    )
    assert [r.reason for r in out["rejected"]] == ["invalid_output", "empty_field"]
    assert len(out["saved"]) == 1


async def test_calls_are_bounded_when_every_reply_is_discarded(
    project: Project, retriever: Retriever
) -> None:
    bad = reply("What does a string slice refer to?", sources=[1])
    llm = ScriptedChat(script=[bad] * 10)
    out = await run(
        context(project, retriever, llm),
        n=2,
        document_id=project.documents["ownership.md"],
        config=replace(SINGLE, extra_calls=1),
    )
    assert out["saved"] == [] and len(out["rejected"]) == 3
    assert len(llm.prompts) == 3  # n + extra_calls, not the whole script


async def test_section_filter_keeps_the_sources_in_the_section(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(script=[reply("What does struct update syntax do?")])
    out = await run(
        context(project, retriever, llm),
        n=1,
        section=("Structs", "Update syntax"),
        topic="Structs Update syntax",
        types=("short_answer",),
    )
    [saved] = out["saved"]
    for chunk_id in shown(llm.prompts[0]):
        assert project.chunks[chunk_id]["section_path"][:2] == ["Structs", "Update syntax"]
    assert saved.section_path[:2] == ["Structs", "Update syntax"]


async def test_without_a_filter_sources_are_spread_across_documents(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(script=[reply("What does clone copy?"), reply("What is a tuple struct?")])
    out = await run(context(project, retriever, llm), n=2, types=("short_answer",), config=SINGLE)
    assert {q.document_id for q in out["saved"]} == set(project.documents.values())


async def test_unused_chunks_are_preferred(project: Project, retriever: Retriever) -> None:
    first = ScriptedChat(script=[reply("What does clone copy?")])
    document = project.documents["structs.md"]
    one = await run(
        context(project, retriever, first), n=1, document_id=document, config=SINGLE, types=("short_answer",)
    )
    second = ScriptedChat(script=[reply("What is a tuple struct?")])
    await run(
        context(project, retriever, second), n=1, document_id=document, config=SINGLE, types=("short_answer",)
    )
    assert not set(shown(second.prompts[0])) & set(one["saved"][0].source_chunk_ids)


async def test_no_matching_material_ends_without_a_model_call(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[])
    out = await run(context(project, retriever, llm), n=3, section=("No such chapter",))
    assert out["reason"] == "no_sources" and out["saved"] == [] and llm.prompts == []


async def test_portuguese_project_asks_for_portuguese(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[reply("O que acontece quando uma String é movida?")])
    await run(
        context(project, retriever, llm, language="pt"),
        n=1,
        document_id=project.documents["ownership.md"],
        types=("short_answer",),
    )
    assert "Write in Portuguese." in llm.prompts[0]


def test_answer_support_counts_key_terms_found_in_the_source() -> None:
    source = "When a String is assigned to another variable the value is moved."
    assert answer_support("The value is moved", source) == 1.0
    assert answer_support("the values were assigned", source) == 1.0  # crude stemming: values ~ value
    assert answer_support("It is copied to the stack", source) == 0.0
    assert answer_support("moved to the stack", source) == 0.5
    assert answer_support("?", source) == 0.5  # nothing to check


async def test_flashcards_are_grounded_pending_items_in_the_projects_language(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            reply("Borrow checker", sources=None),
            reply("Move", answer="Move"),  # the back repeats the front: discarded
            reply("O que é uma fatia de string?"),
        ]
    )
    out = await run(
        context(project, retriever, llm, language="pt"),
        n=2,
        document_id=project.documents["ownership.md"],
        types=("flashcard",),
        config=SINGLE,
    )
    assert [r.reason for r in out["rejected"]] == ["bad_flashcard"]
    assert [q.type for q in out["saved"]] == ["flashcard", "flashcard"]
    for card, prompt in zip(out["saved"], [llm.prompts[0], llm.prompts[2]], strict=True):
        assert card.review_state == "pending" and card.flag is None and card.created_by_me
        assert card.distractors == [] and card.support == 1.0 and 0 <= card.confidence <= 1
        assert set(card.source_chunk_ids) <= set(shown(prompt))
    assert all("flashcard" in p and "Write in Portuguese." in p for p in llm.prompts)
    assert "distractors" not in llm.prompts[0]


async def test_default_types_include_flashcards(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable after a String is moved to another variable?"),
            reply("How are methods defined on a struct?"),
            reply("Which kinds of values implement the Copy trait?"),
            reply("Dangling reference"),
        ]
    )
    out = await run(context(project, retriever, llm), n=4, config=SINGLE)
    types = ["multiple_choice", "short_answer", "application", "flashcard"]
    assert [q.type for q in out["saved"]] == types
